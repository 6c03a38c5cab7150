//! The headers between a switch and its CPU port (`@controller_header` in
//! `sr_int.p4`). P4Runtime turns them into `PacketIn` / `PacketOut` metadata:
//! field ids follow declaration order (1 = port, 2 = reserved).

use super::{be16, put16, Error, Result};

pub const CPU_HEADER_LEN: usize = 4;

macro_rules! cpu_header {
    ($(#[$doc:meta])* $view:ident, $repr:ident, $port:ident, $set:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $view<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $view<T> {
            pub fn new_checked(buffer: T) -> Result<Self> {
                if buffer.as_ref().len() < CPU_HEADER_LEN {
                    return Err(Error::Truncated($what));
                }
                Ok(Self { buffer })
            }

            pub fn $port(&self) -> u16 {
                be16(self.buffer.as_ref(), 0)
            }

            /// The Ethernet frame behind the header.
            pub fn payload(&self) -> &[u8] {
                &self.buffer.as_ref()[CPU_HEADER_LEN..]
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $view<T> {
            pub fn $set(&mut self, port: u16) {
                put16(self.buffer.as_mut(), 0, port);
                put16(self.buffer.as_mut(), 2, 0);
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

            pub fn emit(&self, buffer: &mut [u8]) {
                $view { buffer }.$set(self.$port);
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
