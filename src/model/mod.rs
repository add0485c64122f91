//! The TransformerLens `HookedTransformer`, hand-written forward and backward (one pair per
//! layer, llm.c style), generic over the scalar type.

pub mod activation;
pub mod attention;
pub mod config;
pub mod embed;
pub mod hooks;
pub mod layer_norm;
pub mod linear;
pub mod loss;
pub mod memory;
pub mod params;
pub mod pass;
pub mod qkv;
pub mod residual;
pub mod transformer;
pub mod workspace;

pub use config::{ActFn, ModelConfig};
pub use params::{Layout, ParamEntry};
pub use transformer::Model;
pub use workspace::{HeadPatch, Workspace};
