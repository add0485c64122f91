//! Unknown config keys, caught before serde sees them, with the nearest known key ("did you
//! mean `train.lr`?") and the table's keys. The known keys are read from the config structs
//! themselves, so there is no second list to keep in step.

use crate::error::{Error, Result};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// The field names serde knows for `T` (a struct deserialised with `deserialize_struct`).
pub fn field_names<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut names));
    names
}

/// A deserializer that only records the field list it is asked for, then stops.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> std::result::Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("field names recorded"))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> std::result::Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// Refuse any key of `table` (named `section`, e.g. "train") that is not one of `known`.
pub fn check_table(section: &str, table: &toml::Table, known: &[&str]) -> Result<()> {
    match table.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(bad) => Err(Error::config(&format!("{section}.{bad}"), unknown(bad, known, &format!("[{section}]")))),
    }
}

/// "unknown key; did you mean `lr`? (keys of [train]: …)".
pub fn unknown(bad: &str, known: &[&str], of: &str) -> String {
    let hint = nearest(bad, known).map(|k| format!("; did you mean `{k}`?")).unwrap_or_default();
    format!("unknown key{hint} (keys of {of}: {})", known.join(", "))
}

/// The known key closest to `bad` in edit distance, when it is close enough to be a misspelling.
pub fn nearest<'a>(bad: &str, known: &[&'a str]) -> Option<&'a str> {
    let limit = (bad.chars().count() / 3).max(2);
    known.iter().map(|k| (edit_distance(bad, k), *k)).filter(|(d, _)| *d <= limit).min().map(|(_, k)| k)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_come_from_the_structs() {
        let train = field_names::<super::super::TrainConfig>();
        assert!(train.contains(&"lr") && train.contains(&"grad_clip") && train.contains(&"init"), "{train:?}");
        assert!(field_names::<crate::model::ModelConfig>().contains(&"d_model"));
        assert!(field_names::<crate::task::DataConfig>().contains(&"n_b"));
    }

    #[test]
    fn misspellings_get_the_nearest_key_and_strangers_get_none() {
        let known = ["lr", "batch_size", "weight_decay", "max_steps"];
        assert_eq!(nearest("lrr", &known), Some("lr"));
        assert_eq!(nearest("batchsize", &known), Some("batch_size"));
        assert_eq!(nearest("wieght_decay", &known), Some("weight_decay"));
        assert_eq!(nearest("optimizer", &known), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
