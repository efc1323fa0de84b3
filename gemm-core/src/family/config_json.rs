//! Tile configs from hand-written JSON (`--config`, `check_config`), checked field by
//! field: serde ignores a field it does not know, so a misspelt `"pingpon": true` would
//! silently time the config without it. The tuning cache and records keep serde's
//! leniency (a field dropped in a later version must not invalidate a cache).

use super::TileConfig;
use serde::de::{self, Deserialize, Deserializer, Visitor};

/// The JSON field names of `T`, as its derived `Deserialize` declares them: a
/// deserializer that records what `deserialize_struct` is asked for and stops there.
pub(super) fn struct_fields<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("field names recorded"))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

impl TileConfig {
    /// A config from JSON written by hand, as the tuning cache spells it
    /// (`{"family":"wgmma","bm":128,...}`), refusing fields its family does not have,
    /// with the family's fields in the message.
    pub fn from_json_strict(text: &str) -> Result<TileConfig, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let object = value.as_object().ok_or("not a JSON object")?;
        if let Some(tag) = object.get("family").and_then(|f| f.as_str()) {
            if let Some(fields) = TileConfig::fields_of(tag) {
                let unknown: Vec<&str> = object
                    .keys()
                    .map(String::as_str)
                    .filter(|k| *k != "family" && !fields.contains(k))
                    .collect();
                if !unknown.is_empty() {
                    return Err(format!(
                        "unknown field{} {} for a `{tag}` config (its fields: {})",
                        if unknown.len() > 1 { "s" } else { "" },
                        unknown.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "),
                        fields.join(", ")
                    ));
                }
            }
        }
        serde_json::from_value(value).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::FamilyId;

    #[test]
    fn every_family_lists_its_fields() {
        assert_eq!(FamilyId::ALL.len(), 7, "a new family: add its tag here");
        for tag in ["mma", "simt", "wgmma", "gemv", "decode", "gemv_n", "decode_n"] {
            assert!(TileConfig::fields_of(tag).is_some_and(|f| f.len() >= 3), "{tag}");
        }
        let wgmma = TileConfig::fields_of("wgmma").unwrap();
        for name in [
            "bm",
            "bn",
            "bk",
            "stages",
            "consumers",
            "pingpong",
            "ksplit",
            "tma_store",
        ] {
            assert!(wgmma.contains(&name), "{name} missing from {wgmma:?}");
        }
        assert!(TileConfig::fields_of("mma").unwrap().contains(&"block_m"));
        assert!(TileConfig::fields_of("decode").unwrap().contains(&"rot"));
        assert_eq!(TileConfig::fields_of("wgmma2"), None);
    }

    #[test]
    fn hand_written_configs_refuse_unknown_fields() {
        let good = r#"{"family":"wgmma","bm":128,"bn":128,"bk":64,"stages":6,"consumers":2,"group_m":8,"cluster_m":1,"inflight":false,"epi_smem":true,"pingpong":false}"#;
        let c = TileConfig::from_json_strict(good).unwrap();
        assert_eq!(c, serde_json::from_str::<TileConfig>(good).unwrap());
        let typo = good.replace("\"pingpong\"", "\"pingpon\"");
        let err = TileConfig::from_json_strict(&typo).unwrap_err();
        assert!(err.contains("unknown field `pingpon` for a `wgmma` config"), "{err}");
        assert!(err.contains("pingpong"), "the message lists the family's fields: {err}");
        // serde alone takes it, without the flag: what the strict form is for.
        assert!(serde_json::from_str::<TileConfig>(&typo).is_ok());
        let two = good.replace("\"bk\"", "\"k\"").replace("\"group_m\"", "\"groupm\"");
        let err = TileConfig::from_json_strict(&two).unwrap_err();
        assert!(
            err.contains("unknown fields `k`, `groupm`") || err.contains("unknown fields `groupm`, `k`"),
            "{err}"
        );
        // Other faults keep serde's messages.
        assert!(TileConfig::from_json_strict("[1]")
            .unwrap_err()
            .contains("not a JSON object"));
        let missing = TileConfig::from_json_strict(r#"{"family":"wgmma","bm":128}"#).unwrap_err();
        assert!(missing.contains("missing field"), "{missing}");
        let family = TileConfig::from_json_strict(r#"{"family":"wgmma2","bm":128}"#).unwrap_err();
        assert!(family.contains("unknown variant"), "{family}");
    }
}
