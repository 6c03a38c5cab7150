//! Shell completions and man pages come from the command line's own
//! definition: every subcommand and flag is in them, and bash and man read
//! what is written.

use std::process::Command;

fn intpath(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn completions_name_every_subcommand_and_bash_completes_them() {
    let bash = String::from_utf8(intpath(&["completions", "bash"]).stdout).unwrap();
    for word in [
        "plan", "query", "heatmap", "diagnose", "culprits", "--metric",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    // Bash itself: load the script and ask what follows `intpath qu`.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("intpath.bash");
    std::fs::write(&script, &bash).unwrap();
    let probe = format!(
        "source {}; COMP_WORDS=(intpath qu); COMP_CWORD=1; COMP_LINE='intpath qu'; \
         COMP_POINT=${{#COMP_LINE}}; _intpath intpath qu intpath; echo \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "query");
    for shell in ["zsh", "fish"] {
        let text = String::from_utf8(intpath(&["completions", shell]).stdout).unwrap();
        assert!(
            text.contains("diagnose") && text.contains("--db"),
            "{shell}"
        );
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_intpath"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

#[test]
fn man_pages_cover_every_subcommand_and_man_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = intpath(&["man", "--out", dir.path().to_str().unwrap()]);
    let top = dir.path().join("intpath.1");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        top.display().to_string()
    );
    let page = std::fs::read_to_string(&top).unwrap();
    assert!(page.contains(".TH intpath 1"), "{page}");
    for sub in [
        "plan",
        "query",
        "heatmap",
        "diagnose",
        "diagnose-culprits",
        "query-link",
    ] {
        let f = dir.path().join(format!("intpath-{sub}.1"));
        assert!(f.is_file(), "no {}", f.display());
    }
    let query = std::fs::read_to_string(dir.path().join("intpath-query-link.1")).unwrap();
    assert!(
        query.contains("SRC:PORT\\->DST") || query.contains("SRC:PORT->DST"),
        "{query}"
    );
    // groff (Debian's groff-base, which man uses) renders it.
    let man = Command::new("groff")
        .args(["-man", "-Tutf8", "-P", "-cbou"])
        .arg(&top)
        .output()
        .unwrap();
    assert!(man.status.success());
    let text = String::from_utf8_lossy(&man.stdout);
    assert!(
        text.contains("SYNOPSIS") && text.contains("intpath-query"),
        "{text}"
    );
}
