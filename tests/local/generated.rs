//! Shell completions (bash, zsh, fish) and man pages are generated from the tools' clap
//! commands and committed; this test fails when they are stale.
//!
//! Regenerate with: `KAFKIT_REGENERATE=1 cargo test --test local generated::`.

use std::path::PathBuf;
use std::process::Command;

use clap_complete::Shell;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every generated file: its path under the repository and its bytes.
fn generated() -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for cmd in kafkit::cli::tool_commands() {
        let name = cmd.get_name().to_string();
        for (shell, file) in [
            (Shell::Bash, format!("completions/{name}.bash")),
            (Shell::Zsh, format!("completions/_{name}")),
            (Shell::Fish, format!("completions/{name}.fish")),
        ] {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd.clone(), &name, &mut buf);
            files.push((PathBuf::from(file), buf));
        }
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd.clone())
            .render(&mut buf)
            .expect("render man page");
        files.push((PathBuf::from(format!("man/{name}.1")), buf));
        // A tool with commands (`kafka-transactions`): a page per command, which the tool's
        // page names as `<tool>-<command>(1)`.
        for sub in cmd.get_subcommands() {
            let page = format!("{name}-{}", sub.get_name());
            let mut buf = Vec::new();
            // clap takes a static name (its `string` feature is off); a test may leak it.
            let static_name: &'static str = Box::leak(page.clone().into_boxed_str());
            clap_mangen::Man::new(sub.clone().name(static_name))
                .render(&mut buf)
                .expect("render man page");
            files.push((PathBuf::from(format!("man/{page}.1")), buf));
        }
    }
    files
}

#[test]
fn committed_completions_and_man_pages_are_current() {
    let regenerate = std::env::var_os("KAFKIT_REGENERATE").is_some();
    let mut stale = Vec::new();
    for (rel, bytes) in generated() {
        let path = root().join(&rel);
        if regenerate {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(&bytes[..]) {
            stale.push(rel.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files {stale:?}; run: KAFKIT_REGENERATE=1 cargo test --test local generated::"
    );
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn bash_completes_option_names_and_fixed_values() {
    let script = format!(
        r#"source '{}'
COMP_WORDS=(kafka-topics --cr); COMP_CWORD=1; COMP_LINE='kafka-topics --cr'; COMP_POINT=${{#COMP_LINE}}
_kafka__topics kafka-topics --cr kafka-topics; echo "${{COMPREPLY[@]}}"
source '{}'
COMP_WORDS=(kafka-console-producer --compression-codec ''); COMP_CWORD=2
COMP_LINE='kafka-console-producer --compression-codec '; COMP_POINT=${{#COMP_LINE}}
_kafka__console__producer kafka-console-producer '' --compression-codec; echo "${{COMPREPLY[@]}}""#,
        root().join("completions/kafka-topics.bash").display(),
        root()
            .join("completions/kafka-console-producer.bash")
            .display()
    );
    let out = Command::new("bash").arg("-c").arg(script).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"--create"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        lines
            .get(1)
            .is_some_and(|l| l.contains("zstd") && l.contains("gzip")),
        "{text}"
    );
}

#[test]
fn zsh_loads_completions_and_man_renders() {
    // CI installs zsh and man (`.ci/run`); a developer machine without them skips loudly.
    if !have("zsh") || !have("man") {
        assert!(
            std::env::var_os("CI").is_none(),
            "zsh and man must be installed in CI"
        );
        eprintln!("SKIPPED: zsh or man is not installed");
        return;
    }
    let script = format!(
        "autoload -U compinit && compinit -u -D && fpath=('{}' $fpath) && autoload -U _kafka-topics && whence -w _kafka-topics",
        root().join("completions").display()
    );
    let out = Command::new("zsh")
        .arg("-f")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("function"));
    // Drive an interactive zsh in a pseudo-terminal: TAB after `--cr` must complete `--create`.
    let completions = root().join("completions");
    let script = format!(
        r#"zmodload zsh/zpty
zpty -b z zsh -f -i
zpty -w z "autoload -U compinit && compinit -u -D; fpath=('{dir}' \$fpath); autoload -U _kafka-topics; compdef _kafka-topics kafka-topics; PROMPT='> '"
zpty -w z $'kafka-topics --cr\t'
zpty -r z out '*kafka-topics --create*'
print -r -- "$out"
zpty -d z"#,
        dir = completions.display()
    );
    let out = Command::new("timeout")
        .args(["20", "zsh", "-f", "-c", &script])
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("kafka-topics --create"),
        "zsh completed: {screen:?}"
    );
    for (tool, option) in [
        ("kafka-topics", "--bootstrap-server"),
        ("kafka-console-producer", "--bootstrap-server"),
        ("kafka-console-consumer", "--bootstrap-server"),
        ("kafka-consumer-groups", "--bootstrap-server"),
        ("kafka-dump-log", "--files"),
    ] {
        let out = Command::new("man")
            .arg("-l")
            .arg(root().join(format!("man/{tool}.1")))
            .env("MANPAGER", "cat")
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(tool) && text.contains(option),
            "{tool}: {text}"
        );
    }
}
