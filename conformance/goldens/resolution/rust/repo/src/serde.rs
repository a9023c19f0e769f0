// a file named like the serde crate, never declared as a module
