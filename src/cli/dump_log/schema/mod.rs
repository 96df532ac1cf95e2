//! Kafka's versioned message schemas, read from their binary form and written as the JSON of
//! Kafka's generated `...JsonConverter` classes, which is what `kafka-dump-log` prints for
//! control records and, with a decoder option, for coordinator records.
//!
//! The tables (`control`, `group`, `group_share_streams`, `transaction`, `share`, `metadata`)
//! are generated from Kafka's own
//! message classes by `tools/SchemaTables.java`: for each field, its JSON name, type, the
//! versions it is in (bit `v` of a mask for version `v`), the versions where it may be null or
//! is a tagged field, and its default. Reading follows the generated `read` methods (compact
//! encodings and tagged fields in flexible versions, Kafka's messages for bad lengths); writing
//! follows the generated `write` methods: fields in declaration order, a field only in the
//! versions that have it, a tagged field only when it differs from its default.

pub mod control;
pub mod group;
pub mod group_share_streams;
mod json;
pub mod metadata;
pub mod share;
pub mod transaction;

use super::java::{JavaError, utf8_lossy};
pub use json::to_json;

/// A message: its fields, its versions and those that are flexible (compact encodings, tagged
/// fields).
pub struct Message {
    pub versions: u64,
    pub flexible: u64,
    pub fields: &'static [Field],
}

/// A field's type.
pub enum Ty {
    Int8,
    Int16,
    Int32,
    Int64,
    Uint16,
    Float64,
    Bool,
    Str,
    Bytes,
    Uuid,
    Array(&'static Ty),
    Struct(&'static [Field]),
}

/// A field's default value, which a tagged field is left out of the JSON at.
#[derive(Clone, Copy)]
pub enum Dflt {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'static str),
    /// A nullable field whose default is null.
    Null,
    /// An empty array or byte array, or the zero UUID.
    Empty,
    /// A struct whose fields all hold their defaults.
    Struct,
}

/// One field of a message or struct.
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub versions: u64,
    pub nullable: u64,
    pub tagged: u64,
    pub tag: u32,
    pub default: Option<Dflt>,
}

impl Field {
    pub const fn new(name: &'static str, ty: Ty, versions: u64) -> Field {
        Field {
            name,
            ty,
            versions,
            nullable: 0,
            tagged: 0,
            tag: 0,
            default: None,
        }
    }

    pub const fn nullable(self, versions: u64) -> Field {
        Field {
            nullable: versions,
            ..self
        }
    }

    pub const fn tagged(self, tag: u32, versions: u64) -> Field {
        Field {
            tag,
            tagged: versions,
            ..self
        }
    }

    pub const fn default(self, default: Dflt) -> Field {
        Field {
            default: Some(default),
            ..self
        }
    }

    fn in_version(&self, version: i16) -> bool {
        has(self.versions, version)
    }

    fn tagged_in(&self, version: i16) -> bool {
        has(self.tagged, version)
    }

    /// The default, where the table gives none: zero, the empty string, false, empty.
    fn default_value(&self) -> Dflt {
        self.default.unwrap_or(match self.ty {
            Ty::Int8 | Ty::Int16 | Ty::Int32 | Ty::Int64 | Ty::Uint16 => Dflt::Int(0),
            Ty::Float64 => Dflt::Float(0.0),
            Ty::Bool => Dflt::Bool(false),
            Ty::Str => Dflt::Str(""),
            Ty::Struct(_) => Dflt::Struct,
            Ty::Bytes | Ty::Uuid | Ty::Array(_) => Dflt::Empty,
        })
    }
}

impl Message {
    pub fn has_version(&self, version: i16) -> bool {
        has(self.versions, version)
    }
}

fn has(mask: u64, version: i16) -> bool {
    (0..64).contains(&version) && mask & (1 << version) != 0
}

/// A value read from a message; a struct holds one slot per field of its table (`None` for
/// the fields its version does not have).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Bytes(Vec<u8>),
    Uuid([u8; 16]),
    Array(Vec<Value>),
    Struct(Vec<Option<Value>>),
    /// JSON text to print as it is (a nested message Kafka's tool writes in place of bytes).
    Json(String),
}

/// An integer field of a read message, by name.
pub fn int_field(message: &Message, value: &Value, name: &str) -> Option<i64> {
    let Value::Struct(slots) = value else {
        return None;
    };
    let at = message.fields.iter().position(|f| f.name == name)?;
    match slots.get(at)? {
        Some(Value::Int(v)) => Some(*v),
        _ => None,
    }
}

/// Why a message could not be read: Kafka's exception, as the generated reader throws it.
fn runtime(message: String) -> JavaError {
    JavaError::new("java.lang.RuntimeException", message)
}

fn underflow() -> JavaError {
    JavaError::bare("java.nio.BufferUnderflowException")
}

/// Reads `bytes` as version `version` of `message`.
pub fn read(message: &Message, bytes: &[u8], version: i16) -> Result<Value, JavaError> {
    read_prefix(message, bytes, version).map(|(value, _)| value)
}

/// [`read`], also returning how many bytes the message took.
pub fn read_prefix(
    message: &Message,
    bytes: &[u8],
    version: i16,
) -> Result<(Value, usize), JavaError> {
    let mut r = Reader::new(bytes, version, has(message.flexible, version));
    let value = r.read_struct(message.fields)?;
    Ok((value, r.pos))
}

/// An unsigned varint at the start of `bytes` (Kafka's `readUnsignedVarint`) and its length.
pub fn unsigned_varint(bytes: &[u8]) -> Result<(i32, usize), JavaError> {
    let mut r = Reader::new(bytes, 0, false);
    let value = r.unsigned_varint()?;
    Ok((value, r.pos))
}

/// Kafka's `ByteBufferAccessor` over a message.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], version: i16, flexible: bool) -> Self {
        Reader {
            buf,
            pos: 0,
            version,
            flexible,
        }
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&[u8], JavaError> {
        let out = self.buf.get(self.pos..self.pos + n).ok_or_else(underflow)?;
        self.pos += n;
        Ok(out)
    }

    fn int(&mut self, n: usize) -> Result<i64, JavaError> {
        let b = self.take(n)?;
        Ok(b.iter()
            .fold(if b[0] & 0x80 != 0 { -1i64 } else { 0 }, |v, &x| {
                (v << 8) | i64::from(x)
            }))
    }

    fn unsigned_varint(&mut self) -> Result<i32, JavaError> {
        let mut value: i32 = 0;
        let mut shift = 0;
        loop {
            let b = *self.take(1)?.first().expect("one byte");
            if b & 0x80 == 0 {
                return Ok(value | (i32::from(b) << shift));
            }
            value |= i32::from(b & 0x7f) << shift;
            shift += 7;
            if shift > 28 {
                return Err(JavaError::illegal_argument(format!(
                    "Varint is too long, the most significant bit in the 5th byte is set, \
                     converted value: {value:x}"
                )));
            }
        }
    }

    /// A length or count: compact (unsigned varint, plus one) in flexible versions.
    fn length(&mut self, wide: usize) -> Result<i64, JavaError> {
        if self.flexible {
            Ok(i64::from(self.unsigned_varint()?) - 1)
        } else {
            self.int(wide)
        }
    }

    fn read_struct(&mut self, fields: &[Field]) -> Result<Value, JavaError> {
        let mut slots: Vec<Option<Value>> = fields
            .iter()
            .map(|f| f.in_version(self.version).then(|| default_of(f)))
            .collect();
        for (slot, f) in slots.iter_mut().zip(fields) {
            if f.in_version(self.version) && !f.tagged_in(self.version) {
                *slot = Some(self.read_field(f)?);
            }
        }
        if self.flexible {
            let count = self.unsigned_varint()?;
            for _ in 0..count {
                let tag = self.unsigned_varint()? as u32;
                let size = self.unsigned_varint()?;
                match fields
                    .iter()
                    .position(|f| f.tagged_in(self.version) && f.tag == tag)
                {
                    Some(at) => slots[at] = Some(self.read_field(&fields[at])?),
                    None => {
                        let size = usize::try_from(size).map_err(|_| underflow())?;
                        self.bytes(size)?;
                    }
                }
            }
        }
        Ok(Value::Struct(slots))
    }

    fn read_field(&mut self, f: &Field) -> Result<Value, JavaError> {
        let nullable = has(f.nullable, self.version);
        let null = || {
            runtime(format!(
                "non-nullable field {} was serialized as null",
                f.name
            ))
        };
        let null_or = |nullable| {
            if nullable {
                Ok(Value::Null)
            } else {
                Err(null())
            }
        };
        Ok(match &f.ty {
            Ty::Str => {
                let len = self.length(2)?;
                if len < 0 {
                    return null_or(nullable);
                }
                if len > 0x7fff {
                    return Err(runtime(format!(
                        "string field {} had invalid length {len}",
                        f.name
                    )));
                }
                Value::Str(utf8_lossy(self.bytes(len as usize)?))
            }
            Ty::Bytes => {
                let len = self.length(4)?;
                if len < 0 {
                    return null_or(nullable);
                }
                Value::Bytes(self.bytes(len as usize)?.to_vec())
            }
            // A nullable struct is preceded by a marker: a byte, negative for null; as a
            // tagged field, an unsigned varint, 0 for null (Kafka's generated readers).
            Ty::Struct(_) if nullable && self.null_marker(f.tagged_in(self.version))? => {
                Value::Null
            }
            Ty::Array(element) => {
                let len = self.length(4)?;
                if len < 0 {
                    return null_or(nullable);
                }
                if len as usize > self.remaining() {
                    return Err(runtime(format!(
                        "Tried to allocate a collection of size {len}, but there are only {} \
                         bytes remaining.",
                        self.remaining()
                    )));
                }
                let mut items = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    items.push(self.read_element(element)?);
                }
                Value::Array(items)
            }
            other => self.read_element(other)?,
        })
    }

    fn null_marker(&mut self, tagged: bool) -> Result<bool, JavaError> {
        Ok(if tagged {
            self.unsigned_varint()? <= 0
        } else {
            self.int(1)? < 0
        })
    }

    /// `Readable.readArray`: Kafka's message when the bytes are not there.
    fn bytes(&mut self, len: usize) -> Result<&[u8], JavaError> {
        let remaining = self.remaining();
        if len > remaining {
            return Err(runtime(format!(
                "Error reading byte array of {len} byte(s): only {remaining} byte(s) available"
            )));
        }
        self.take(len)
    }

    /// A value of a fixed-size type or a struct (an array's elements are never null).
    fn read_element(&mut self, ty: &Ty) -> Result<Value, JavaError> {
        Ok(match ty {
            Ty::Int8 => Value::Int(self.int(1)?),
            Ty::Int16 => Value::Int(self.int(2)?),
            Ty::Int32 => Value::Int(self.int(4)?),
            Ty::Int64 => Value::Int(self.int(8)?),
            Ty::Uint16 => Value::Int(self.int(2)? & 0xffff),
            Ty::Float64 => Value::Float(f64::from_bits(self.int(8)? as u64)),
            Ty::Bool => Value::Bool(self.int(1)? != 0),
            Ty::Uuid => Value::Uuid(self.take(16)?.try_into().expect("16 bytes")),
            Ty::Struct(fields) => self.read_struct(fields)?,
            Ty::Str => {
                let len = self.length(2)?.max(0) as usize;
                Value::Str(utf8_lossy(self.bytes(len)?))
            }
            Ty::Bytes | Ty::Array(_) => {
                return Err(runtime("nested arrays are not in Kafka's schemas".into()));
            }
        })
    }
}

/// The value a field holds before it is read (and a tagged field keeps when absent).
fn default_of(f: &Field) -> Value {
    match (f.default_value(), &f.ty) {
        (Dflt::Int(v), _) => Value::Int(v),
        (Dflt::Float(v), _) => Value::Float(v),
        (Dflt::Bool(v), _) => Value::Bool(v),
        (Dflt::Str(s), _) => Value::Str(s.to_string()),
        (Dflt::Null, _) => Value::Null,
        (Dflt::Empty, Ty::Bytes) => Value::Bytes(Vec::new()),
        (Dflt::Empty, Ty::Uuid) => Value::Uuid([0; 16]),
        (Dflt::Empty, _) => Value::Array(Vec::new()),
        (Dflt::Struct, Ty::Struct(fields)) => {
            Value::Struct(fields.iter().map(|f| Some(default_of(f))).collect())
        }
        (Dflt::Struct, _) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static ENDPOINT: &[Field] = &[Field::new("port", Ty::Int16, 0x1)];
    static WITH_ENDPOINT: &[Field] = &[
        Field::new("endpoint", Ty::Struct(ENDPOINT), 0x1).nullable(0x1),
        Field::new("after", Ty::Int8, 0x1),
    ];
    static MESSAGE: Message = Message {
        versions: 0x1,
        flexible: 0x1,
        fields: WITH_ENDPOINT,
    };

    /// An untagged nullable struct is preceded by a byte, negative for null, in flexible
    /// versions too (as `StreamsGroupMemberMetadataValue.userEndpoint`); only a tagged one
    /// by an unsigned varint.
    #[test]
    fn an_untagged_null_struct_is_marked_by_a_byte() {
        // Null endpoint (0xff), `after` = 7, no tagged fields.
        let null = read(&MESSAGE, &[0xff, 7, 0], 0).unwrap();
        assert!(matches!(
            &null,
            Value::Struct(v) if matches!(v[0], Some(Value::Null)) && matches!(v[1], Some(Value::Int(7)))
        ));
        // Present endpoint (1), port 9092 (no tagged fields in it), `after` = 7.
        let present = read(&MESSAGE, &[1, 0x23, 0x84, 0, 7, 0], 0).unwrap();
        assert!(matches!(
            &present,
            Value::Struct(v) if matches!(v[0], Some(Value::Struct(_))) && matches!(v[1], Some(Value::Int(7)))
        ));
    }
}
