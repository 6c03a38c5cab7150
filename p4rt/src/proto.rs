//! Generated P4Runtime v1 types, in modules mirroring the protobuf packages
//! (the generated code refers across packages by relative paths).

pub mod p4 {
    pub mod v1 {
        tonic::include_proto!("p4.v1");
    }
    pub mod config {
        pub mod v1 {
            tonic::include_proto!("p4.config.v1");
        }
    }
}

pub mod google {
    pub mod rpc {
        tonic::include_proto!("google.rpc");
    }
}

/// The encoded `FileDescriptorSet` of every message above, for reflection
/// (P4Info text format) and for checking against the official descriptors.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/p4runtime_descriptor.bin"));

/// The descriptors of [`FILE_DESCRIPTOR_SET`], decoded once.
pub fn descriptor_pool() -> &'static prost_reflect::DescriptorPool {
    static POOL: std::sync::OnceLock<prost_reflect::DescriptorPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        prost_reflect::DescriptorPool::decode(FILE_DESCRIPTOR_SET)
            .expect("descriptor set generated at build time is valid")
    })
}
