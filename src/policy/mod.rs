//! Policies users bring: parsers and compilers for the formats other tools
//! already write, each in its own file, kept free of measuring so that they
//! can be tested on fixtures and generated input alone.
//!
//! - [`oci_seccomp`]: OCI runtime-spec seccomp profiles (Docker, Podman,
//!   containerd, Kubernetes) compiled to one classic-BPF filter;
//! - [`audit_rules`]: rule files in `auditctl` syntax, encoded as the
//!   kernel's `struct audit_rule_data`;
//! - [`landlock_sandbox`]: the kernel's Landlock sample sandboxer's
//!   `LL_FS_RO`/`LL_FS_RW`/`LL_TCP_*` lists;
//! - [`source`]: where a policy file's bytes come from (the file, or a
//!   stored run's copy when `secperf rerun` repeats it).

pub mod audit_rules;
pub mod landlock_sandbox;
pub mod oci_seccomp;
pub mod source;
