pub mod compare;
pub mod gradcheck;
pub mod order;
