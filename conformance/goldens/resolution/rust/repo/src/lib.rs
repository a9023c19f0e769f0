mod parser;
use crate::parser::parse;
use std::collections::HashMap;
use serde::Deserialize;

pub fn run() { parse(); }
