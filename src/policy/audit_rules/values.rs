//! Values as auditctl reads them, for the options and fields of a line:
//! numbers as C's `strtoul`/`strtol` read them (decimal, `0x` hex, `0`
//! octal), but only when all of the text is the number and it fits the
//! 32 bits a field holds (auditctl would read `10x` as 10 and truncate
//! `4294967296`: secperf refuses both and says why), names looked up
//! case-insensitively in auditctl's tables, and permissions (`-p`,
//! `-F perm=`) as letters.

use crate::sys::audit as au;

/// A case-insensitive table lookup (`name` already lower case for the
/// lower-case tables).
pub(super) fn lookup(table: &[(&str, u32)], name: &str) -> Option<u32> {
    table
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// An unsigned number as C's strtoul(…, 0) reads it (0x hex, 0 octal,
/// decimal), but all of the text, and within 64 bits.
pub(super) fn c_unsigned(text: &str) -> Option<u64> {
    let (digits, radix) =
        if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            (h, 16)
        } else if text.len() > 1 && text.starts_with('0') {
            (&text[1..], 8)
        } else {
            (text, 10)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// A whole number that fits 32 bits unsigned.
pub(super) fn number_u32(text: &str) -> Result<u32, String> {
    let v = c_unsigned(text).ok_or_else(|| not_a_number(text))?;
    u32::try_from(v).map_err(|_| out_of_range(text))
}

/// A number that may be negative (stored as its 32-bit two's complement,
/// as auditctl's strtol does): from -2147483648 to 4294967295.
pub(super) fn signed_u32(text: &str) -> Result<u32, String> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let v = c_unsigned(digits).ok_or_else(|| not_a_number(text))?;
    if neg {
        if v > 1 << 31 {
            return Err(out_of_range(text));
        }
        Ok((v as u32).wrapping_neg())
    } else {
        u32::try_from(v).map_err(|_| out_of_range(text))
    }
}

/// `-b`, `-r`, `--backlog_wait_time`: a whole number.
pub(super) fn count(text: &str, opt: &str) -> Result<u32, String> {
    if !text.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!("{opt} takes a number, not '{text}'"));
    }
    number_u32(text)
}

fn not_a_number(text: &str) -> String {
    format!(
        "'{text}' is not a number (decimal, 0x hex or 0 octal, nothing after it; auditctl \
         would read only its leading digits)"
    )
}

fn out_of_range(text: &str) -> String {
    format!(
        "{text} is out of range (fields hold 32 bits: -2147483648 to 4294967295; auditctl would \
         silently truncate it)"
    )
}

/// Whether `text` starts with a digit: auditctl's test for a number
/// rather than a name.
pub(super) fn starts_with_digit(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit())
}

/// A number where a name could also stand, as auditctl tells them apart:
/// a digit first ([`number_u32`]) or `-` and a digit ([`signed_u32`]);
/// `None` when `text` is not written as a number.
pub(super) fn number(text: &str) -> Option<Result<u32, String>> {
    if starts_with_digit(text) {
        Some(number_u32(text))
    } else if text.len() >= 2 && text.starts_with('-') && starts_with_digit(&text[1..]) {
        Some(signed_u32(text))
    } else {
        None
    }
}

/// `-p`/`perm=`: up to four of r, w, x, a (any case).
pub(super) fn perm_bits(text: &str) -> Result<u32, String> {
    if text.len() > 4 {
        return Err(format!(
            "permissions '{text}' are too long (r, w, x and a, each once)"
        ));
    }
    let mut val = 0;
    for c in text.chars() {
        val |= match c.to_ascii_lowercase() {
            'r' => au::AUDIT_PERM_READ,
            'w' => au::AUDIT_PERM_WRITE,
            'x' => au::AUDIT_PERM_EXEC,
            'a' => au::AUDIT_PERM_ATTR,
            _ => {
                return Err(format!(
                    "permission '{c}' is not one of r, w, x, a (read, write, execute, attribute \
                     change)"
                ));
            }
        };
    }
    Ok(val)
}
