//! Canonical P4Runtime bytestrings.
//!
//! P4Runtime carries every `bit<W>` value as big-endian bytes. A device may
//! reject anything but the canonical form (shortest string, at least one
//! byte), and compares stored entries byte-wise, so the controller must
//! produce exactly that form to recognise its own entries on read-back.

/// Why a value does not fit the field it is meant for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("value {value} needs {needed} bits, the field has {width}")]
    TooWide {
        value: String,
        needed: u32,
        width: u32,
    },
    #[error("empty bytestring (a value needs at least one byte)")]
    Empty,
    #[error("prefix length {prefix_len} is outside 0..={width}")]
    PrefixLen { prefix_len: i32, width: u32 },
    #[error("value {value} has bits set beyond its /{prefix_len} prefix")]
    HostBits { value: String, prefix_len: i32 },
    #[error("value {value} has bits set outside its mask {mask}")]
    OutsideMask { value: String, mask: String },
    #[error("range low {low} is above high {high}")]
    InvertedRange { low: String, high: String },
    #[error("not a hex value {text:?}: {why}")]
    Hex { text: String, why: &'static str },
    #[error("{len} bytes do not fit in 128 bits")]
    Over128 { len: usize },
}

/// `0x`-prefixed lowercase hex, for error messages and dry-run output.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + 2 * bytes.len());
    s.push_str("0x");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Parses `0x`-prefixed (or bare) hex of any length, e.g. `"0x0a000101"`.
/// An odd number of digits is allowed (`"0x1"` is one byte).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, ValueError> {
    let err = |why| ValueError::Hex {
        text: text.to_owned(),
        why,
    };
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if digits.is_empty() {
        return Err(err("no digits"));
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let raw = digits.as_bytes();
    let mut out = Vec::with_capacity(raw.len().div_ceil(2));
    let (head, rest) = raw.split_at(raw.len() % 2);
    if let Some(&c) = head.first() {
        out.push(nibble(c).ok_or_else(|| err("bad digit"))?);
    }
    for pair in rest.chunks_exact(2) {
        match (nibble(pair[0]), nibble(pair[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => return Err(err("bad digit")),
        }
    }
    Ok(out)
}

/// Number of significant bits of a big-endian value (0 for zero).
pub fn bit_len(bytes: &[u8]) -> u32 {
    match bytes.iter().position(|&b| b != 0) {
        None => 0,
        Some(i) => (bytes.len() - i - 1) as u32 * 8 + (8 - bytes[i].leading_zeros()),
    }
}

/// The canonical form of `bytes` for a `width`-bit field: leading zero bytes
/// removed (one byte kept for zero), after checking the value fits.
pub fn canonical(bytes: &[u8], width: u32) -> Result<Vec<u8>, ValueError> {
    if bytes.is_empty() {
        return Err(ValueError::Empty);
    }
    let first = bytes
        .iter()
        .position(|&b| b != 0)
        .unwrap_or(bytes.len() - 1);
    let value = &bytes[first..];
    let needed = bit_len(value);
    if needed > width {
        return Err(ValueError::TooWide {
            value: hex(value),
            needed,
            width,
        });
    }
    Ok(value.to_vec())
}

/// The canonical encoding of an unsigned integer in a `width`-bit field.
pub fn encode_uint(value: u128, width: u32) -> Result<Vec<u8>, ValueError> {
    canonical(&value.to_be_bytes(), width)
}

/// The canonical encoding of an unsigned integer with no width to check
/// (a device reporting its own values).
pub fn uint_bytes(value: u128) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(15);
    bytes[first..].to_vec()
}

/// Decodes a big-endian value of at most 16 significant bytes.
pub fn decode_uint(bytes: &[u8]) -> Result<u128, ValueError> {
    if bytes.is_empty() {
        return Err(ValueError::Empty);
    }
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let significant = &bytes[first..];
    if significant.len() > 16 {
        return Err(ValueError::Over128 { len: bytes.len() });
    }
    Ok(significant
        .iter()
        .fold(0u128, |acc, &b| acc << 8 | u128::from(b)))
}

/// The value left-padded with zeros to exactly `ceil(width / 8)` bytes, the
/// form a data plane works with. The value must fit `width`.
pub fn padded(bytes: &[u8], width: u32) -> Result<Vec<u8>, ValueError> {
    let c = canonical(bytes, width)?;
    let len = (width as usize).div_ceil(8).max(1);
    let mut out = vec![0u8; len.saturating_sub(c.len())];
    out.extend_from_slice(&c);
    Ok(out)
}

/// Checks an LPM key: prefix within the width and no bits set past it.
pub fn check_lpm(value: &[u8], prefix_len: i32, width: u32) -> Result<(), ValueError> {
    if prefix_len < 0 || prefix_len as u32 > width {
        return Err(ValueError::PrefixLen { prefix_len, width });
    }
    let full = padded(value, width)?;
    // Bit i (0 = most significant bit of the width) lives in the padded form
    // after the pad bits that round the width up to whole bytes.
    let pad = full.len() as u32 * 8 - width;
    let host_bits_set = (prefix_len as u32..width).any(|i| {
        let bit = pad + i;
        full[(bit / 8) as usize] & (0x80 >> (bit % 8)) != 0
    });
    if host_bits_set {
        return Err(ValueError::HostBits {
            value: hex(value),
            prefix_len,
        });
    }
    Ok(())
}

/// Checks a ternary key: value and mask fit, and the value has no bit set
/// outside the mask.
pub fn check_ternary(value: &[u8], mask: &[u8], width: u32) -> Result<(), ValueError> {
    let v = padded(value, width)?;
    let m = padded(mask, width)?;
    if v.iter().zip(&m).any(|(v, m)| v & !m != 0) {
        return Err(ValueError::OutsideMask {
            value: hex(value),
            mask: hex(mask),
        });
    }
    Ok(())
}

/// Checks a range key: both ends fit and `low <= high`.
pub fn check_range(low: &[u8], high: &[u8], width: u32) -> Result<(), ValueError> {
    // Equal-length padded big-endian bytes compare like the numbers.
    if padded(low, width)? > padded(high, width)? {
        return Err(ValueError::InvertedRange {
            low: hex(low),
            high: hex(high),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_strips_leading_zeros_and_keeps_one_byte_for_zero() {
        assert_eq!(canonical(&[0, 0, 1, 2], 32).unwrap(), vec![1, 2]);
        assert_eq!(canonical(&[0, 0], 16).unwrap(), vec![0]);
        assert_eq!(encode_uint(0, 9).unwrap(), vec![0]);
        assert_eq!(encode_uint(0x1ff, 9).unwrap(), vec![1, 0xff]);
        assert_eq!(encode_uint(0x0a000101, 32).unwrap(), vec![10, 0, 1, 1]);
    }

    #[test]
    fn width_is_checked_to_the_bit() {
        let e = encode_uint(0x200, 9).unwrap_err();
        assert_eq!(e.to_string(), "value 0x0200 needs 10 bits, the field has 9");
        assert!(canonical(&[0x80], 7).is_err());
        assert!(canonical(&[0x7f], 7).is_ok());
        assert_eq!(canonical(&[], 8), Err(ValueError::Empty));
        // A 720-bit label stack fits exactly 90 bytes.
        let mut labels = vec![0u8; 90];
        labels[0] = 0xff;
        assert_eq!(canonical(&labels, 720).unwrap().len(), 90);
        assert!(canonical(&[&[1u8][..], &labels].concat(), 720).is_err());
    }

    #[test]
    fn decode_roundtrips_and_limits_to_128_bits() {
        for v in [0u128, 1, 255, 256, 0x1_0000_0000, u128::MAX] {
            assert_eq!(decode_uint(&encode_uint(v, 128).unwrap()).unwrap(), v);
        }
        assert_eq!(decode_uint(&[0, 0, 0, 7]).unwrap(), 7);
        assert!(matches!(
            decode_uint(&[1; 17]),
            Err(ValueError::Over128 { .. })
        ));
    }

    #[test]
    fn hex_parsing() {
        assert_eq!(parse_hex("0x0a000101").unwrap(), vec![10, 0, 1, 1]);
        assert_eq!(parse_hex("0x1").unwrap(), vec![1]);
        assert_eq!(parse_hex("abc").unwrap(), vec![0x0a, 0xbc]);
        assert!(parse_hex("0x").is_err());
        assert!(parse_hex("0xzz").is_err());
        assert_eq!(hex(&[0, 0xab]), "0x00ab");
    }

    #[test]
    fn padded_form() {
        assert_eq!(padded(&[1], 9).unwrap(), vec![0, 1]);
        assert_eq!(padded(&[0, 0, 0, 5], 16).unwrap(), vec![0, 5]);
    }

    #[test]
    fn lpm_ternary_range_checks() {
        assert!(check_lpm(&[10, 0, 1, 0], 24, 32).is_ok());
        assert!(check_lpm(&[10, 0, 1, 1], 24, 32).is_err());
        assert!(check_lpm(&[10], 33, 32).is_err());
        assert!(check_lpm(&[0], 0, 32).is_ok());
        // Odd width: bit<9>, prefix 1 keeps only the top bit (0x100).
        assert!(check_lpm(&[1, 0], 1, 9).is_ok());
        assert!(check_lpm(&[1, 0x80], 1, 9).is_err());
        assert!(check_ternary(&[0x0f], &[0xff], 8).is_ok());
        assert!(check_ternary(&[0x1f], &[0x0f], 8).is_err());
        assert!(check_range(&[1], &[2], 8).is_ok());
        assert!(check_range(&[1, 0], &[0xff], 16).is_err());
    }
}
