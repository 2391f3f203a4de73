//! A minimal reader of the BPF Type Format (BTF), enough to find the type
//! id of one kernel function in /sys/kernel/btf/vmlinux.
//!
//! A BPF LSM program names the hook it attaches to by the BTF type id of
//! the kernel's `bpf_lsm_<hook>` FUNC (`attach_btf_id` of BPF_PROG_LOAD).
//! Without libbpf that id has to be found here: the blob is a header, a
//! type section and a string section; types are numbered from 1 in the
//! order they appear and each is a 12-byte `struct btf_type` followed by
//! kind-specific data whose size must be known to reach the next one
//! (include/uapi/linux/btf.h, Documentation/bpf/btf.rst).

use std::path::Path;

/// Where the kernel publishes its own BTF.
pub const VMLINUX: &str = "/sys/kernel/btf/vmlinux";

/// `btf_header.magic`.
pub const MAGIC: u16 = 0xEB9F;
/// The header fields every version has (magic to str_len).
pub const HEADER_LEN: usize = 24;
/// `struct btf_type`: name_off, info, size/type.
pub const TYPE_LEN: usize = 12;

/// Why a blob could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BtfError {
    #[error("BTF blob of {0} bytes is shorter than its header")]
    Short(usize),
    #[error("BTF magic is {0:#06x}, expected 0xeb9f")]
    BadMagic(u16),
    #[error("BTF is in the other byte order (magic 0x9feb)")]
    ForeignEndian,
    #[error("BTF version {0} is not supported (expected 1)")]
    Version(u8),
    #[error("BTF {section} section ({off}+{len}) lies outside the {total}-byte blob")]
    Section {
        section: &'static str,
        off: usize,
        len: usize,
        total: usize,
    },
    #[error("BTF type {id} at byte {off} of the type section is truncated")]
    Truncated { id: u32, off: usize },
    #[error("BTF type {id} has unknown kind {kind}; cannot walk past it")]
    UnknownKind { id: u32, kind: u8 },
    #[error("BTF type {id}: name offset {off} is outside the string section")]
    Name { id: u32, off: u32 },
}

/// The kinds of BTF types (`BTF_KIND_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Ptr,
    Array,
    Struct,
    Union,
    Enum,
    Fwd,
    Typedef,
    Volatile,
    Const,
    Restrict,
    Func,
    FuncProto,
    Var,
    Datasec,
    Float,
    DeclTag,
    TypeTag,
    Enum64,
}

impl Kind {
    /// The kind of a `BTF_KIND_*` number, if known.
    pub fn from_raw(raw: u8) -> Option<Kind> {
        Some(match raw {
            1 => Kind::Int,
            2 => Kind::Ptr,
            3 => Kind::Array,
            4 => Kind::Struct,
            5 => Kind::Union,
            6 => Kind::Enum,
            7 => Kind::Fwd,
            8 => Kind::Typedef,
            9 => Kind::Volatile,
            10 => Kind::Const,
            11 => Kind::Restrict,
            12 => Kind::Func,
            13 => Kind::FuncProto,
            14 => Kind::Var,
            15 => Kind::Datasec,
            16 => Kind::Float,
            17 => Kind::DeclTag,
            18 => Kind::TypeTag,
            19 => Kind::Enum64,
            _ => return None,
        })
    }

    /// Bytes following the 12-byte `struct btf_type` for this kind.
    pub fn trailing_len(self, vlen: u16) -> usize {
        let vlen = usize::from(vlen);
        match self {
            // INT: one u32 of encoding, offset and bits.
            Kind::Int => 4,
            // ARRAY: struct btf_array {type, index_type, nelems}.
            Kind::Array => 12,
            // struct btf_member {name_off, type, offset} per member.
            Kind::Struct | Kind::Union => 12 * vlen,
            // struct btf_enum {name_off, val} per value.
            Kind::Enum => 8 * vlen,
            // struct btf_param {name_off, type} per parameter.
            Kind::FuncProto => 8 * vlen,
            // struct btf_var {linkage}.
            Kind::Var => 4,
            // struct btf_var_secinfo {type, offset, size} per variable.
            Kind::Datasec => 12 * vlen,
            // struct btf_decl_tag {component_idx}.
            Kind::DeclTag => 4,
            // struct btf_enum64 {name_off, val_lo32, val_hi32} per value.
            Kind::Enum64 => 12 * vlen,
            Kind::Ptr
            | Kind::Fwd
            | Kind::Typedef
            | Kind::Volatile
            | Kind::Const
            | Kind::Restrict
            | Kind::Func
            | Kind::Float
            | Kind::TypeTag => 0,
        }
    }
}

/// One type's fixed part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BtfType {
    /// Type id (1-based; 0 is `void`).
    pub id: u32,
    pub kind: Kind,
    /// Offset of the name in the string section (0: anonymous).
    pub name_off: u32,
    /// Members, values or parameters, by kind (bits 0-15 of `info`).
    pub vlen: u16,
    /// Bit 31 of `info` (bitfield members, union forward, ...).
    pub kind_flag: bool,
    /// `size` or `type`, by kind (for FUNC: the FUNC_PROTO's id).
    pub size_or_type: u32,
}

/// A parsed BTF blob: the types indexed by id, and the strings.
#[derive(Debug, Clone)]
pub struct Btf {
    types: Vec<BtfType>,
    strings: Vec<u8>,
}

fn u32_at(data: &[u8], off: usize) -> Option<u32> {
    let bytes = data.get(off..off.checked_add(4)?)?;
    Some(u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// A section's byte range, checked against the blob.
fn section(
    section: &'static str,
    base: usize,
    off: u32,
    len: u32,
    total: usize,
) -> Result<std::ops::Range<usize>, BtfError> {
    let err = BtfError::Section {
        section,
        off: off as usize,
        len: len as usize,
        total,
    };
    let start = base.checked_add(off as usize).ok_or(err.clone())?;
    let end = start.checked_add(len as usize).ok_or(err.clone())?;
    if end > total {
        return Err(err);
    }
    Ok(start..end)
}

impl Btf {
    /// Parses a blob in native byte order and walks every type once.
    pub fn parse(data: &[u8]) -> Result<Btf, BtfError> {
        if data.len() < HEADER_LEN {
            return Err(BtfError::Short(data.len()));
        }
        let magic = u16::from_ne_bytes([data[0], data[1]]);
        if magic == MAGIC.swap_bytes() {
            return Err(BtfError::ForeignEndian);
        }
        if magic != MAGIC {
            return Err(BtfError::BadMagic(magic));
        }
        if data[2] != 1 {
            return Err(BtfError::Version(data[2]));
        }
        let field = |i: usize| u32_at(data, 4 + 4 * i).unwrap_or(0);
        let (hdr_len, type_off, type_len, str_off, str_len) =
            (field(0), field(1), field(2), field(3), field(4));
        let hdr_len = hdr_len as usize;
        if hdr_len < HEADER_LEN || hdr_len > data.len() {
            return Err(BtfError::Section {
                section: "header",
                off: 0,
                len: hdr_len,
                total: data.len(),
            });
        }
        let types = &data[section("type", hdr_len, type_off, type_len, data.len())?];
        let strings = &data[section("string", hdr_len, str_off, str_len, data.len())?];
        let mut parsed = Vec::new();
        let mut off = 0usize;
        let mut id = 1u32;
        while off < types.len() {
            let truncated = BtfError::Truncated { id, off };
            let (Some(name_off), Some(info), Some(size_or_type)) = (
                u32_at(types, off),
                u32_at(types, off + 4),
                u32_at(types, off + 8),
            ) else {
                return Err(truncated);
            };
            let raw_kind = ((info >> 24) & 0x1f) as u8;
            let kind =
                Kind::from_raw(raw_kind).ok_or(BtfError::UnknownKind { id, kind: raw_kind })?;
            let vlen = (info & 0xffff) as u16;
            let next = off + TYPE_LEN + kind.trailing_len(vlen);
            if next > types.len() {
                return Err(truncated);
            }
            if name_off as usize >= strings.len().max(1) {
                return Err(BtfError::Name { id, off: name_off });
            }
            parsed.push(BtfType {
                id,
                kind,
                name_off,
                vlen,
                kind_flag: info >> 31 == 1,
                size_or_type,
            });
            off = next;
            id += 1;
        }
        Ok(Btf {
            types: parsed,
            strings: strings.to_vec(),
        })
    }

    /// Reads and parses a BTF file.
    pub fn read(path: &Path) -> anyhow::Result<Btf> {
        let data =
            std::fs::read(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        Btf::parse(&data).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// How many types there are (the highest id).
    pub fn len(&self) -> usize {
        self.types.len()
    }

    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The type of an id (None for 0, `void`, and ids past the end).
    pub fn get(&self, id: u32) -> Option<&BtfType> {
        self.types.get((id as usize).checked_sub(1)?)
    }

    /// All types, in id order.
    pub fn types(&self) -> &[BtfType] {
        &self.types
    }

    /// The string at `off` ("" for anonymous types, invalid UTF-8 lossy).
    pub fn name(&self, off: u32) -> String {
        let rest = self.strings.get(off as usize..).unwrap_or(&[]);
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        String::from_utf8_lossy(&rest[..end]).into_owned()
    }

    /// The first type of `kind` named `name`.
    pub fn find(&self, kind: Kind, name: &str) -> Option<&BtfType> {
        let wanted = name.as_bytes();
        self.types.iter().find(|t| {
            t.kind == kind && {
                let rest = self.strings.get(t.name_off as usize..).unwrap_or(&[]);
                rest.starts_with(wanted) && rest.get(wanted.len()).is_none_or(|&b| b == 0)
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mechanisms")
            .join(rel)
    }

    /// Builds a blob the way the kernel lays it out, for tests.
    #[derive(Default)]
    pub(crate) struct Builder {
        types: Vec<u8>,
        strings: Vec<u8>,
    }

    impl Builder {
        pub(crate) fn new() -> Self {
            Builder {
                types: Vec::new(),
                strings: vec![0],
            }
        }
        pub(crate) fn string(&mut self, s: &str) -> u32 {
            if s.is_empty() {
                return 0;
            }
            let off = self.strings.len() as u32;
            self.strings.extend_from_slice(s.as_bytes());
            self.strings.push(0);
            off
        }
        /// Appends a type: its name, raw kind, vlen, size/type and the
        /// trailing words.
        pub(crate) fn add(&mut self, name: &str, kind: u8, vlen: u16, st: u32, tail: &[u32]) {
            let name_off = self.string(name);
            let info = (u32::from(kind) << 24) | u32::from(vlen);
            for w in [name_off, info, st].iter().chain(tail) {
                self.types.extend_from_slice(&w.to_ne_bytes());
            }
        }
        pub(crate) fn build(&self) -> Vec<u8> {
            let mut out = Vec::new();
            out.extend_from_slice(&MAGIC.to_ne_bytes());
            out.push(1); // version
            out.push(0); // flags
            let words = [
                HEADER_LEN as u32,
                0,
                self.types.len() as u32,
                self.types.len() as u32,
                self.strings.len() as u32,
            ];
            for w in words {
                out.extend_from_slice(&w.to_ne_bytes());
            }
            out.extend_from_slice(&self.types);
            out.extend_from_slice(&self.strings);
            out
        }
    }

    /// One type of every kind, each with trailing data, so finding the
    /// last one proves every trailing size is right. Ids in comments.
    pub(crate) fn every_kind() -> Builder {
        let mut b = Builder::new();
        b.add("int", 1, 0, 4, &[0x0100_0020]); // 1 INT, signed 32 bits
        b.add("", 2, 0, 1, &[]); // 2 PTR -> int
        b.add("", 3, 0, 0, &[1, 1, 16]); // 3 ARRAY int[16]
        let (a, c) = (b.string("a"), b.string("c"));
        b.add("file", 4, 2, 16, &[a, 1, 0, c, 2, 64]); // 4 STRUCT file
        b.add("u", 5, 1, 8, &[a, 2, 0]); // 5 UNION
        let (x, y) = (b.string("X"), b.string("Y"));
        b.add("e", 6, 2, 4, &[x, 0, y, 1]); // 6 ENUM
        b.add("inode", 7, 0, 0, &[]); // 7 FWD
        b.add("myint", 8, 0, 1, &[]); // 8 TYPEDEF
        b.add("", 9, 0, 1, &[]); // 9 VOLATILE
        b.add("", 10, 0, 1, &[]); // 10 CONST
        b.add("", 11, 0, 2, &[]); // 11 RESTRICT
        let (f, m) = (b.string("file"), b.string("mask"));
        b.add("", 13, 2, 1, &[f, 2, m, 1]); // 12 FUNC_PROTO int(int *, int)
        b.add("bpf_lsm_file_open", 12, 0, 12, &[]); // 13 FUNC (decoy)
        b.add("v", 14, 0, 1, &[1]); // 14 VAR, global
        b.add(".data", 15, 1, 4, &[14, 0, 4]); // 15 DATASEC
        b.add("double", 16, 0, 8, &[]); // 16 FLOAT
        b.add("tag", 17, 0, 4, &[u32::MAX]); // 17 DECL_TAG on struct file
        b.add("user", 18, 0, 1, &[]); // 18 TYPE_TAG
        let z = b.string("Z");
        b.add("e64", 19, 1, 8, &[z, 1, 1]); // 19 ENUM64
        b.add("bpf_lsm_file_permission", 12, 0, 12, &[]); // 20 FUNC
        b
    }

    #[test]
    fn walks_every_kind() {
        let btf = Btf::parse(&every_kind().build()).unwrap();
        assert_eq!(btf.len(), 20);
        let f = btf.find(Kind::Func, "bpf_lsm_file_permission").unwrap();
        assert_eq!((f.id, f.size_or_type), (20, 12));
        assert_eq!(btf.get(12).unwrap().kind, Kind::FuncProto);
        assert_eq!(btf.get(12).unwrap().vlen, 2);
        assert_eq!(btf.find(Kind::Func, "bpf_lsm_file_open").unwrap().id, 13);
        assert_eq!(btf.name(btf.get(4).unwrap().name_off), "file");
        assert_eq!(btf.get(19).unwrap().kind, Kind::Enum64);
        assert_eq!(btf.get(0), None);
        assert_eq!(btf.get(21), None);
        // Names must match whole: a prefix or another kind is no match.
        assert!(btf.find(Kind::Func, "bpf_lsm_file").is_none());
        assert!(btf.find(Kind::Struct, "bpf_lsm_file_permission").is_none());
        assert_eq!(btf.find(Kind::Fwd, "inode").unwrap().id, 7);
    }

    /// tests/fixtures/mechanisms/btf/every-kind.btf is the blob above,
    /// written once; the parser must read the committed bytes the same.
    #[test]
    fn reads_the_handcrafted_fixture() {
        let path = fixture("btf/every-kind.btf");
        let data = std::fs::read(&path).unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(data, every_kind().build(), "fixture differs from builder");
        }
        let btf = Btf::read(&path).unwrap();
        assert_eq!(btf.len(), 20);
        assert_eq!(
            btf.find(Kind::Func, "bpf_lsm_file_permission").unwrap().id,
            20
        );
    }

    #[test]
    fn a_wrong_trailing_size_is_detected() {
        // An INT without its 4 trailing bytes: the walk runs off the end.
        let mut b = Builder::new();
        b.add("int", 1, 0, 4, &[]);
        let err = Btf::parse(&b.build()).unwrap_err();
        assert_eq!(err, BtfError::Truncated { id: 1, off: 0 });
    }

    #[test]
    fn rejects_bad_headers_and_kinds() {
        assert_eq!(Btf::parse(&[0; 4]).unwrap_err(), BtfError::Short(4));
        let mut blob = every_kind().build();
        blob[0..2].copy_from_slice(&0x1234u16.to_ne_bytes());
        assert_eq!(Btf::parse(&blob).unwrap_err(), BtfError::BadMagic(0x1234));
        blob[0..2].copy_from_slice(&MAGIC.swap_bytes().to_ne_bytes());
        assert_eq!(Btf::parse(&blob).unwrap_err(), BtfError::ForeignEndian);
        let mut blob = every_kind().build();
        blob[2] = 2;
        assert_eq!(Btf::parse(&blob).unwrap_err(), BtfError::Version(2));
        let mut b = Builder::new();
        b.add("x", 31, 0, 0, &[]);
        assert_eq!(
            Btf::parse(&b.build()).unwrap_err(),
            BtfError::UnknownKind { id: 1, kind: 31 }
        );
        // A string section claimed past the end.
        let mut blob = every_kind().build();
        let len = blob.len() as u32;
        blob[20..24].copy_from_slice(&len.to_ne_bytes());
        assert!(matches!(
            Btf::parse(&blob).unwrap_err(),
            BtfError::Section {
                section: "string",
                ..
            }
        ));
        // A name pointing outside the strings.
        let mut b = Builder::new();
        b.add("", 2, 0, 0, &[]);
        let mut blob = b.build();
        blob[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&999u32.to_ne_bytes());
        assert_eq!(
            Btf::parse(&blob).unwrap_err(),
            BtfError::Name { id: 1, off: 999 }
        );
    }

    #[test]
    fn trailing_sizes_match_the_uapi() {
        let cases = [
            (1, 4),
            (2, 0),
            (3, 12),
            (4, 36),
            (5, 36),
            (6, 24),
            (7, 0),
            (8, 0),
            (9, 0),
            (10, 0),
            (11, 0),
            (12, 0),
            (13, 24),
            (14, 4),
            (15, 36),
            (16, 0),
            (17, 4),
            (18, 0),
            (19, 36),
        ];
        for (raw, len) in cases {
            let kind = Kind::from_raw(raw).unwrap();
            assert_eq!(kind.trailing_len(3), len, "{kind:?}");
        }
        assert_eq!(Kind::from_raw(0), None);
        assert_eq!(Kind::from_raw(20), None);
    }

    /// The kernel's own BTF: the whole section walks and the LSM hook of
    /// the lsm-hooks-2020 experiment is a FUNC whose type is a FUNC_PROTO.
    #[test]
    fn finds_the_file_permission_hook_in_vmlinux() {
        let path = Path::new(VMLINUX);
        if !path.exists() {
            let test = "finds_the_file_permission_hook_in_vmlinux";
            let reason = format!("{VMLINUX} missing (kernel without CONFIG_DEBUG_INFO_BTF)");
            crate::testing::skip_kernel_feature(test, "vmlinux-btf", &reason);
            return;
        }
        let btf = Btf::read(path).unwrap();
        assert!(btf.len() > 1000, "{} types", btf.len());
        let f = btf
            .find(Kind::Func, "bpf_lsm_file_permission")
            .expect("bpf_lsm_file_permission in vmlinux BTF");
        assert_eq!(f.kind, Kind::Func);
        assert_eq!(btf.get(f.size_or_type).unwrap().kind, Kind::FuncProto);
        eprintln!("bpf_lsm_file_permission: BTF id {}", f.id);
    }
}
