pub mod gradcheck;
