// SPDX-License-Identifier: MIT OR Apache-2.0
// Runs on the host while cargo builds: the number of worker threads.
fn main() {
    println!("cargo:rustc-env=TALLY_WORKERS=4");
}
