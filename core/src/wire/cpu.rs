//! The headers between a switch and its CPU port (`@controller_header` in
//! `sr_int.p4`). P4Runtime turns them into `PacketIn` / `PacketOut` metadata:
//! field ids follow declaration order (1 = port, 2 = reserved).

use super::{read_u16, write_u16, Error, Result};

mod field {
    use crate::wire::Field;
    pub const PORT: Field = 0..2;
    pub const PAD: Field = 2..4;
}

pub const CPU_HEADER_LEN: usize = field::PAD.end;

macro_rules! cpu_header {
    ($(#[$doc:meta])* $view:ident, $repr:ident, $port:ident, $set:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $view<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $view<T> {
            pub const fn new_unchecked(buffer: T) -> Self {
                Self { buffer }
            }

            pub fn new_checked(buffer: T) -> Result<Self> {
                if buffer.as_ref().len() < CPU_HEADER_LEN {
                    return Err(Error::Truncated($what));
                }
                Ok(Self { buffer })
            }

            pub fn $port(&self) -> u16 {
                read_u16(self.buffer.as_ref(), field::PORT)
            }

            pub fn pad(&self) -> u16 {
                read_u16(self.buffer.as_ref(), field::PAD)
            }

            /// The Ethernet frame behind the header.
            pub fn payload(&self) -> &[u8] {
                &self.buffer.as_ref()[CPU_HEADER_LEN..]
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $view<T> {
            pub fn $set(&mut self, port: u16) {
                write_u16(self.buffer.as_mut(), field::PORT, port);
            }

            pub fn set_pad(&mut self, v: u16) {
                write_u16(self.buffer.as_mut(), field::PAD, v);
            }
        }

        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $repr {
            pub $port: u16,
        }

        impl $repr {
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
