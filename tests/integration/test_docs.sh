#!/bin/sh
# test_docs.sh - the advisorctl examples of the README and the man pages,
# run as shown (issue 30: "docs that are tested").  docexamples turns every
# "$ advisorctl ..." example with the output the docs show into a cram test
# (Debian's python3-cram); cram runs it against a private advisord with the
# shipped catalog and the shipped policy in enforce mode, and fails on any
# difference, printing the diff.  What varies from run to run (decision
# ids) and what the docs elide ("...") is matched by a pattern, not
# skipped.  The sbatch examples run on the private cluster
# (test_slurm.sh).  A change that alters an output shown in the docs fails
# here until the docs show the new output.
. "$(dirname "$0")/lib.sh"

# Debian's python3-cram installs it as cram3.
cram_bin=$(command -v cram3 || command -v cram) || skip_all "cram is needed (Debian package python3-cram)"
scratch_dir
# The shipped policy, enforcing at the top level whatever mode it ships in
# (the docs' rejects are enforce mode's).
sed 's/^mode:.*/mode: enforce/' "$top_srcdir/etc/policy.yaml" > "$POLICY"
grep -q '^mode: enforce$' "$POLICY" || fail "etc/policy.yaml has no top-level mode: line"
start_daemon

# The examples name the files of the current directory (catalog.yaml,
# policy.yaml) and call advisorctl by name: it is the build's, on the
# private daemon unless the example says --local.
cat > "$SCRATCH/prelude" <<EOT
cp "$CATALOG" catalog.yaml; cp "$POLICY" policy.yaml
advisorctl() { case " \$* " in *" --local "*) "$ADVISORCTL" "\$@" ;; *) "$ADVISORCTL" --socket "$SOCK" "\$@" ;; esac; }
EOT
mkdir "$SCRATCH/cram"
"$top_srcdir/tests/integration/docexamples" --only advisorctl --prelude "$SCRATCH/prelude" \
	"$top_srcdir/README.md" "$top_builddir"/man/*.[158] > "$SCRATCH/cram/docs.t" ||
	fail "docexamples: $(cat "$SCRATCH/cram/docs.t")"
n=$(grep -c '^[^ ].*:[0-9]*$' "$SCRATCH/cram/docs.t")
"$cram_bin" "$SCRATCH/cram/docs.t" > "$SCRATCH/cram.out" 2>&1 ||
	fail "the docs' advisorctl examples differ from what runs (- shown, + got):
$(cat "$SCRATCH/cram.out")"
pass "$n advisorctl examples of README.md and the man pages print what the docs show"

# The extractor matches what it should: a changed figure fails.
sed 's/^\(  [^$>].*\)GiB/\1GB/' "$SCRATCH/cram/docs.t" > "$SCRATCH/cram/bad.t"
cmp -s "$SCRATCH/cram/docs.t" "$SCRATCH/cram/bad.t" && fail "no shown output to alter"
"$cram_bin" -q "$SCRATCH/cram/bad.t" > "$SCRATCH/cram.out" 2>&1 && fail "an altered example still passes"
pass "an example whose shown output differs fails"

# The YAML of advisor-catalog.yaml(5)'s and advisor-policy.yaml(5)'s
# EXAMPLE sections loads as shown (issue 30: every example runs): the
# catalog example beside the shipped catalog is refused only for the names
# the shipped one already has, so it is loaded alone, with the policy
# example's GPUs added from the shipped catalog.
man_yaml() {
	sed -n '/^\.SH EXAMPLE/,/^\.SH /{/^\.nf/,/^\.fi/p}' "$1" |
		sed -e '/^\.\(nf\|fi\|RS\|RE\)/d' -e 's/\\-/-/g' -e 's/\\(dq/"/g'
}
man_yaml "$top_builddir/man/advisor-catalog.yaml.5" > "$SCRATCH/example-catalog.yaml"
man_yaml "$top_builddir/man/advisor-policy.yaml.5" > "$SCRATCH/example-policy.yaml"
[ -s "$SCRATCH/example-catalog.yaml" ] && [ -s "$SCRATCH/example-policy.yaml" ] ||
	fail "no EXAMPLE YAML in advisor-catalog.yaml(5) or advisor-policy.yaml(5)"
: > "$SCRATCH/empty-policy.yaml"
"$ADVISORCTL" --local --catalog "$SCRATCH/example-catalog.yaml" --policy "$SCRATCH/empty-policy.yaml" \
	catalog models > "$SCRATCH/ex-cat.out" 2>&1 ||
	fail "advisor-catalog.yaml(5)'s EXAMPLE does not load: $(cat "$SCRATCH/ex-cat.out")"
grep -q "llama3-70b" "$SCRATCH/ex-cat.out" || fail "the catalog example's models: $(cat "$SCRATCH/ex-cat.out")"
"$ADVISORCTL" --local --catalog "$CATALOG" --policy "$SCRATCH/example-policy.yaml" policy \
	> "$SCRATCH/ex-pol.out" 2>&1 ||
	fail "advisor-policy.yaml(5)'s EXAMPLE does not load: $(cat "$SCRATCH/ex-pol.out")"
pass "the EXAMPLE YAML of advisor-catalog.yaml(5) and advisor-policy.yaml(5) loads"
