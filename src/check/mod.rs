pub mod compare;
pub mod gradcheck;
