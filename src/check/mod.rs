pub mod compare;
pub mod golden;
pub mod gradcheck;
pub mod horizon;
pub mod names;
pub mod order;
pub mod past_horizon;
pub mod verify;
