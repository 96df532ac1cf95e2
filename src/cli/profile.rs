//! Named clusters: profiles in `$XDG_CONFIG_HOME/kafkit/config.toml` (`~/.config/kafkit/...`),
//! chosen with `--profile NAME` or `$KAFKIT_PROFILE`. A profile names either an embedded log
//! directory or a cluster's bootstrap servers plus client properties; explicit flags win.
//!
//! ```toml
//! [profiles.dev]
//! log-dir = "/data/kafkit"
//!
//! [profiles.prod]
//! bootstrap-servers = "broker1:9092,broker2:9092"
//! [profiles.prod.properties]
//! "request.timeout.ms" = 5000
//! ```
//!
//! Property values are never printed: they may hold secrets.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};

use super::properties::Properties;

/// One profile, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    pub log_dir: Option<PathBuf>,
    pub bootstrap_servers: Option<String>,
    pub properties: Properties,
}

/// Where the profiles file lives.
pub fn config_path() -> Option<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("XDG_CONFIG_HOME") {
        return Some(Path::new(&dir).join("kafkit/config.toml"));
    }
    non_empty("HOME").map(|home| Path::new(&home).join(".config/kafkit/config.toml"))
}

/// The profile chosen by `--profile` (or `$KAFKIT_PROFILE`), if any.
pub fn selected(flag: Option<&str>) -> anyhow::Result<Option<Profile>> {
    let env = std::env::var("KAFKIT_PROFILE")
        .ok()
        .filter(|v| !v.is_empty());
    let Some(name) = flag.map(str::to_string).or(env) else {
        return Ok(None);
    };
    let path = config_path()
        .ok_or_else(|| anyhow!("cannot find the profiles file: set XDG_CONFIG_HOME or HOME"))?;
    let bytes = crate::files::read_limited(&path, crate::files::CONFIG_FILE_LIMIT);
    let text = bytes
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .with_context(|| {
            format!(
                "profile '{name}' was asked for, but {} cannot be read",
                path.display()
            )
        })?;
    load(&text, &name)
        .with_context(|| format!("in {}", path.display()))
        .map(Some)
}

/// Finds profile `name` in the TOML text.
pub fn load(text: &str, name: &str) -> anyhow::Result<Profile> {
    let doc: toml::Table = text.parse().context("not valid TOML")?;
    let profiles = doc
        .get("profiles")
        .and_then(toml::Value::as_table)
        .ok_or_else(|| anyhow!("no [profiles.<name>] tables"))?;
    let Some(entry) = profiles.get(name) else {
        let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
        bail!(
            "no profile '{name}'; the profiles are: {}",
            known.join(", ")
        );
    };
    let table = entry
        .as_table()
        .ok_or_else(|| anyhow!("profile '{name}' is not a table"))?;
    let mut profile = Profile::default();
    for (key, value) in table {
        match (key.as_str(), value) {
            ("log-dir", toml::Value::String(dir)) => profile.log_dir = Some(expand_home(dir)),
            ("bootstrap-servers", toml::Value::String(s)) => {
                profile.bootstrap_servers = Some(s.clone())
            }
            ("properties", toml::Value::Table(props)) => {
                for (k, v) in props {
                    let v = match v {
                        toml::Value::String(s) => s.clone(),
                        toml::Value::Integer(i) => i.to_string(),
                        toml::Value::Float(f) => f.to_string(),
                        toml::Value::Boolean(b) => b.to_string(),
                        _ => bail!(
                            "profile '{name}': property '{k}' must be a string, number or boolean"
                        ),
                    };
                    profile.properties.insert(k.clone(), v);
                }
            }
            _ => bail!(
                "profile '{name}': unknown or mistyped key '{key}' (expected log-dir, bootstrap-servers or [properties])"
            ),
        }
    }
    if profile.log_dir.is_some() && profile.bootstrap_servers.is_some() {
        bail!("profile '{name}' names both log-dir and bootstrap-servers; keep one");
    }
    Ok(profile)
}

/// `~/x` means `$HOME/x`, as in a shell.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
[profiles.dev]
log-dir = "/data/kafkit"

[profiles.prod]
bootstrap-servers = "b1:9092,b2:9092"
[profiles.prod.properties]
"request.timeout.ms" = 5000
"sasl.jaas.config" = "secret"
"#;

    #[test]
    fn profiles_resolve() {
        let dev = load(TEXT, "dev").unwrap();
        assert_eq!(dev.log_dir, Some(PathBuf::from("/data/kafkit")));
        let prod = load(TEXT, "prod").unwrap();
        assert_eq!(prod.bootstrap_servers.as_deref(), Some("b1:9092,b2:9092"));
        assert_eq!(prod.properties["request.timeout.ms"], "5000");
    }

    #[test]
    fn errors_name_the_problem_not_secrets() {
        let err = format!("{:#}", load(TEXT, "nope").unwrap_err());
        assert!(
            err.contains("no profile 'nope'") && err.contains("dev, prod"),
            "{err}"
        );
        assert!(!err.contains("secret"));
        let err = format!(
            "{:#}",
            load("[profiles.x]\nlog-dir = 3\n", "x").unwrap_err()
        );
        assert!(err.contains("log-dir"), "{err}");
        let both = "[profiles.x]\nlog-dir = \"/a\"\nbootstrap-servers = \"h:1\"\n";
        assert!(format!("{:#}", load(both, "x").unwrap_err()).contains("both"));
        assert!(load("not toml [", "x").is_err());
    }
}
