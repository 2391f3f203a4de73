//! One cell of a row on its way between SQLite and PostgreSQL.
//!
//! SQLite's values are dynamically typed and PostgreSQL's client checks
//! each parameter's type against the column's, so a cell is sent as what
//! the *column* wants: an integer into a DOUBLE PRECISION column is sent as
//! a float, and NULL as NULL of any type.

use std::error::Error;

use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use rusqlite::types::Value;

/// A SQLite value sent as a PostgreSQL parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell(pub Value);

impl ToSql for Cell {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match (&self.0, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Integer(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Integer(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Integer(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Integer(i), &Type::TEXT) => i.to_string().to_sql(ty, out),
            (Value::Integer(i), &Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Real(f), &Type::TEXT) => f.to_string().to_sql(ty, out),
            (Value::Text(s), &Type::TEXT | &Type::VARCHAR) => s.to_sql(ty, out),
            (Value::Text(s), &Type::BYTEA) => s.as_bytes().to_sql(ty, out),
            (Value::Blob(b), &Type::BYTEA) => b.to_sql(ty, out),
            (v, ty) => Err(format!("cannot store SQLite value {v:?} in a {ty} column").into()),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// Column `i` of a PostgreSQL row as a SQLite value, by the column's type.
pub fn from_row(row: &postgres::Row, i: usize) -> anyhow::Result<Value> {
    let ty = row.columns()[i].type_().clone();
    let v = match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Value::Integer),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map(|v| Value::Integer(v.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map(|v| Value::Integer(v.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map(|v| Value::Integer(v.into())),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map(|v| Value::Real(v.into())),
        Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map(Value::Blob),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
            row.try_get::<_, Option<String>>(i)?.map(Value::Text)
        }
        other => anyhow::bail!(
            "column {} has type {other}, which a secperf store does not use",
            row.columns()[i].name()
        ),
    };
    Ok(v.unwrap_or(Value::Null))
}
