//! The headers between a switch and its CPU port (`@controller_header` in
//! `sr_int.p4`). P4Runtime turns them into `PacketIn` / `PacketOut` metadata:
//! field ids follow declaration order (1 = port, 2 = reserved).

use super::{read_u16, write_u16, Error, Result};

mod field {
    use crate::wire::Field;
    pub const PORT: Field = 0..2;
    pub const PAD: Field = 2..4;
}

/// Bytes of either CPU header, the offset of the frame behind it.
pub const CPU_HEADER_LEN: usize = field::PAD.end;

macro_rules! cpu_header {
    ($(#[$doc:meta])* $view:ident, $repr:ident, $port:ident, $set:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $view<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $view<T> {
            /// Wraps `buffer` without a length check, for bytes already checked or
            /// built to size: the accessors panic on a short buffer.
            pub const fn new_unchecked(buffer: T) -> Self {
                Self { buffer }
            }

            /// Wraps `buffer` once its length is checked, so that the accessors can
            /// index without further checks.
            pub fn new_checked(buffer: T) -> Result<Self> {
                if buffer.as_ref().len() < CPU_HEADER_LEN {
                    return Err(Error::Truncated($what));
                }
                Ok(Self { buffer })
            }

            /// The port the header names (ingress for a packet-in, egress for a
            /// packet-out): the one field a switch and its controller exchange.
            pub fn $port(&self) -> u16 {
                read_u16(self.buffer.as_ref(), field::PORT)
            }

            /// Padding that aligns the header to 32 bits; it carries nothing.
            pub fn pad(&self) -> u16 {
                read_u16(self.buffer.as_ref(), field::PAD)
            }

            /// The Ethernet frame behind the header.
            pub fn payload(&self) -> &[u8] {
                &self.buffer.as_ref()[CPU_HEADER_LEN..]
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $view<T> {
            /// Sets the port the header names.
            pub fn $set(&mut self, port: u16) {
                write_u16(self.buffer.as_mut(), field::PORT, port);
            }

            /// Sets the padding (zero on everything intpath emits).
            pub fn set_pad(&mut self, v: u16) {
                write_u16(self.buffer.as_mut(), field::PAD, v);
            }
        }

        /// Owned form of the header, to build one without a buffer at hand.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $repr {
            /// The port the header names.
            pub $port: u16,
        }

        impl $repr {
            /// Copies the fields out, for code that compares or edits headers rather
            /// than bytes.
            pub fn parse<T: AsRef<[u8]>>(h: &$view<T>) -> Self {
                Self { $port: h.$port() }
            }

            /// Writes the header; the view must hold [`CPU_HEADER_LEN`] bytes.
            pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut $view<T>) {
                h.$set(self.$port);
                h.set_pad(0);
            }
        }
    };
}

cpu_header!(
    /// Prepended to frames a switch sends to its CPU port: where it came in.
    PacketIn, PacketInRepr, ingress_port, set_ingress_port, "packet-in header"
);
cpu_header!(
    /// Prepended by the controller to frames it injects. Port 0 means "run the
    /// ingress pipeline as if the frame arrived here" (probe injection at a
    /// switch without a host); any other port sends the frame out there as is.
    PacketOut, PacketOutRepr, egress_port, set_egress_port, "packet-out header"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_bytes() {
        let mut buf = [0xaau8; 6];
        PacketInRepr {
            ingress_port: 0x01fe,
        }
        .emit(&mut PacketIn::new_unchecked(&mut buf[..]));
        assert_eq!(buf, [0x01, 0xfe, 0, 0, 0xaa, 0xaa]);
        let out = [0x02, 0x00, 0, 0, 0x11];
        let h = PacketOut::new_checked(&out[..]).unwrap();
        assert_eq!(
            PacketOutRepr::parse(&h),
            PacketOutRepr {
                egress_port: 0x0200
            }
        );
        assert_eq!(h.payload(), [0x11]);
        assert_eq!(
            PacketOut::new_checked(&out[..3]).unwrap_err(),
            Error::Truncated("packet-out header")
        );
    }
}
