//! How `push_route` carries a probe's route: `labels` is one bytestring of
//! [`MAX_HOPS`] 16-bit labels, label 0 (the first egress port) in the most
//! significant bits, unused slots zero.

use intpath_core::wire::MAX_HOPS;

/// The bytes of a full stack: what `labels_from_stack` accepts at most.
const STACK_BYTES: usize = MAX_HOPS * 2;

/// Why a route does not fit `push_route`'s label stack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelStackError {
    #[error("{given} labels exceed the {MAX_HOPS} a probe can carry")]
    /// More labels than a probe carries (a route longer than `MAX_HOPS`).
    TooMany {
        /// Labels given.
        given: usize,
    },
    #[error("label stack of {len} significant bytes exceeds {STACK_BYTES}")]
    /// A `labels` value read back is wider than the stack.
    TooLong {
        /// Significant bytes of the value.
        len: usize,
    },
}

/// The `labels` parameter for `labels`, padded to the full stack (the
/// P4Runtime client makes it canonical).
pub fn label_stack(labels: &[u16]) -> Result<Vec<u8>, LabelStackError> {
    if labels.len() > MAX_HOPS {
        return Err(LabelStackError::TooMany {
            given: labels.len(),
        });
    }
    let mut out = vec![0u8; STACK_BYTES];
    for (slot, label) in out.chunks_exact_mut(2).zip(labels) {
        slot.copy_from_slice(&label.to_be_bytes());
    }
    Ok(out)
}

/// Every slot of a `labels` value, canonical (leading zeros stripped) or
/// padded: the value is right-aligned in the stack as a big-endian number.
pub fn labels_from_stack(value: &[u8]) -> Result<[u16; MAX_HOPS], LabelStackError> {
    let first = value.iter().position(|&b| b != 0).unwrap_or(value.len());
    let significant = &value[first..];
    if significant.len() > STACK_BYTES {
        return Err(LabelStackError::TooLong {
            len: significant.len(),
        });
    }
    let mut padded = [0u8; STACK_BYTES];
    padded[STACK_BYTES - significant.len()..].copy_from_slice(significant);
    let mut labels = [0u16; MAX_HOPS];
    for (l, c) in labels.iter_mut().zip(padded.chunks_exact(2)) {
        *l = u16::from_be_bytes([c[0], c[1]]);
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_stack_reads_left_to_right() {
        let s = label_stack(&[2, 3, 0x1ff]).unwrap();
        assert_eq!(s.len(), 90);
        assert_eq!(&s[..6], &[0, 2, 0, 3, 1, 0xff]);
        assert!(s[6..].iter().all(|&b| b == 0));
    }

    #[test]
    fn canonical_and_padded_stacks_decode_alike() {
        let s = label_stack(&[7, 1]).unwrap();
        let first = s.iter().position(|&b| b != 0).unwrap();
        let want = labels_from_stack(&s).unwrap();
        assert_eq!(labels_from_stack(&s[first..]).unwrap(), want);
        assert_eq!(&want[..3], &[7, 1, 0]);
        assert_eq!(labels_from_stack(&[]).unwrap(), [0; MAX_HOPS]);
    }

    #[test]
    fn too_many_labels_and_too_long_stacks_are_refused() {
        assert_eq!(
            label_stack(&[1; MAX_HOPS + 1]),
            Err(LabelStackError::TooMany { given: 46 })
        );
        let mut long = vec![1u8];
        long.extend_from_slice(&[0; STACK_BYTES]);
        assert_eq!(
            labels_from_stack(&long),
            Err(LabelStackError::TooLong { len: 91 })
        );
    }
}
