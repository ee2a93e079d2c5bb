//! The names of x86-64 Linux system calls, for warnings and errors that
//! name a call: the kernel's own (`asm/unistd_64.h`), from [`Sysno`].

use syscalls::Sysno;

/// The last call number lard names: the table of Linux 6.4.
const LAST_NAMED: i32 = 450;

/// The name of system call `nr`, or `"unknown"`. Calls of the Linux 6.4
/// table are named; later ones (number 451 on, and `uretprobe` and
/// `uprobe` in the gap at 335) are `"unknown"` as well.
pub fn name(nr: u64) -> &'static str {
    match usize::try_from(nr).ok().and_then(Sysno::new) {
        Some(Sysno::uretprobe | Sysno::uprobe) => "unknown",
        Some(call) if call.id() <= LAST_NAMED => call.name(),
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::name;

    #[test]
    fn names_follow_the_kernel_table() {
        let cases = [
            (0, "read"),
            (56, "clone"),
            (57, "fork"),
            (59, "execve"),
            (85, "creat"),
            (262, "newfstatat"),
            (291, "epoll_create1"),
            (309, "getcpu"),
            (334, "rseq"),
            (335, "unknown"),
            (336, "unknown"),
            (387, "unknown"),
            (435, "clone3"),
            (450, "set_mempolicy_home_node"),
            (451, "unknown"),
            (100_000, "unknown"),
            (u64::MAX, "unknown"),
        ];
        for (nr, n) in cases {
            assert_eq!(name(nr), n, "{nr}");
        }
    }
}
