//! Named clusters: `--profile NAME` / `$KAFKIT_PROFILE` from `$XDG_CONFIG_HOME/kafkit/config.toml`.

use crate::common;

use common::Kafkit;

#[test]
fn profiles_pick_a_log_dir_or_a_cluster_and_flags_win() {
    let k = Kafkit::new();
    let config = tempfile::tempdir().unwrap();
    let dev_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config.path().join("kafkit")).unwrap();
    std::fs::write(
        config.path().join("kafkit/config.toml"),
        format!(
            "[profiles.dev]\nlog-dir = \"{}\"\n\n[profiles.down]\nbootstrap-servers = \"127.0.0.1:1\"\n[profiles.down.properties]\n\"sasl.jaas.config\" = \"hunter2\"\n",
            dev_dir.path().display()
        ),
    )
    .unwrap();
    let run = |args: &[&str], profile_env: Option<&str>| {
        let mut cmd = k.cmd("kafka-topics");
        cmd.args(args).env("XDG_CONFIG_HOME", config.path());
        match profile_env {
            Some(p) => cmd.env("KAFKIT_PROFILE", p),
            None => cmd.env_remove("KAFKIT_PROFILE"),
        };
        cmd.output().unwrap()
    };
    let out = run(&["--create", "--topic", "in-dev", "--profile", "dev"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        dev_dir.path().join("in-dev-0").exists(),
        "the profile's log dir was used"
    );
    let out = run(&["--list"], Some("dev"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "in-dev\n");
    // An explicit --log-dir wins over the profile.
    let out = run(
        &["--list", "--log-dir", k.log_dir().to_str().unwrap()],
        Some("dev"),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "\n");
    // A cluster profile: the refused address is named, and no secret is printed.
    let out = run(&["--list", "--profile", "down"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("127.0.0.1:1") && !err.contains("hunter2"),
        "{err}"
    );
    // An unknown profile lists the known ones.
    let out = run(&["--list", "--profile", "nope"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no profile 'nope'") && err.contains("dev, down"),
        "{err}"
    );
}

/// `--log-dir` and `--bootstrap-server` together are refused (either taken silently would
/// surprise), and nothing is written; a `--log-dir` outranks a command config's cluster.
#[test]
fn a_log_dir_and_a_bootstrap_server_together_are_refused() {
    let k = Kafkit::new();
    let log_dir = k.log_dir().to_str().unwrap().to_string();
    for (tool, args) in [
        ("kafka-topics", vec!["--create", "--topic", "t"]),
        ("kafka-console-producer", vec!["--topic", "t"]),
        ("kafka-console-consumer", vec!["--topic", "t"]),
        ("kafka-consumer-groups", vec!["--list"]),
    ] {
        let out = k
            .cmd(tool)
            .args(&args)
            .args(["--log-dir", &log_dir, "--bootstrap-server", "127.0.0.1:1"])
            .write_stdin("x\n")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{tool}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "--log-dir and --bootstrap-server cannot be used together: --log-dir works on the embedded log, --bootstrap-server on a Kafka cluster; give one (see {tool} --help)\n"
            )
        );
        assert!(
            std::fs::read_dir(k.log_dir()).unwrap().next().is_none(),
            "{tool} wrote nothing"
        );
    }
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(config.path(), "bootstrap.servers=127.0.0.1:1\n").unwrap();
    let config = config.path().to_str().unwrap();
    k.ok(
        "kafka-topics",
        &[
            "--create",
            "--topic",
            "t",
            "--log-dir",
            &log_dir,
            "--command-config",
            config,
        ],
        None,
    );
    assert!(k.log_dir().join("t-0").exists());
}
