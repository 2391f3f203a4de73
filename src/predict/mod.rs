//! `secperf predict`: what a policy would cost a program, without
//! switching it. The program's syscalls are counted by the kernel
//! ([`counts`], read-only: safe on a production host); a policy's cost
//! per syscall comes from secperf's A/B measurements; the prediction is
//! their product, summed.

pub mod counts;
