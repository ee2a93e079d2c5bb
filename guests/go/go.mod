// SPDX-License-Identifier: MIT OR Apache-2.0
module lard.invalid/guests

go 1.19
