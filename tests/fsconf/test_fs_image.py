"""fs-image/ (the FreeSWITCH image ops build) against the module contract and against the
reference build the real-switch tests run (../shared/freeswitch), checked by reading: Docker is
not runnable here. The checkers are plain functions so the tests can also prove they refuse a
broken build list, an unpinned source and an unpinned compose default.

The one module list is fs-image/modules.conf: modules.conf.xml's modules plus its documented
extras section; where the reference tree exists, its mod/*.so must be exactly that list."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from app.routing.node_modules import contract_modules
from tests.plugins.skips import require

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "fs-image" / "Dockerfile").read_text()
BUILD_LIST = (ROOT / "fs-image" / "modules.conf").read_text()
MODEL_SUMS = (ROOT / "fs-image" / "pocketsphinx-model.sha256").read_text()
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
# The reference build (its README lists sources, refs and configure line); absent on a checkout
# without ../shared, where the tests that compare against it skip and say so (fail under CI=true).
REFERENCE = Path(os.environ.get("SBC_REFERENCE_FREESWITCH", ROOT.parent / "shared" / "freeswitch"))
NO_REFERENCE = f"no reference FreeSWITCH build at {REFERENCE} (set SBC_REFERENCE_FREESWITCH)"
EXTRAS_MARKER = re.compile(r"^## extras\b", re.M)

TAG = re.compile(r"^v?\d+(\.\d+)+$")         # v1.10.12, 1.0.4
COMMIT = re.compile(r"^[0-9a-f]{40}$")        # full: a short hash can become ambiguous
IMAGE_VERSION = re.compile(r"^[^:$]+:\d+(\.\d+)+[-\w.]*$")  # name:12.8-slim, name:1.10.12-1


def build_list(text: str) -> list[str]:
    """``<category>/<module>`` lines of a FreeSWITCH modules.conf, comments and blanks out."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def module_names(text: str) -> list[str]:
    return [entry.rsplit("/", 1)[-1] for entry in build_list(text)]


def extras(text: str) -> list[str]:
    """Modules of the documented extras section (after the ``## extras`` comment)."""
    parts = EXTRAS_MARKER.split(text, maxsplit=1)
    return module_names(parts[1]) if len(parts) == 2 else []


def build_list_problems(text: str, contract: tuple[str, ...]) -> list[str]:
    """The build list is modules.conf.xml's modules plus the documented extras, nothing else."""
    problems = []
    entries = build_list(text)
    names = module_names(text)
    documented = set(extras(text))
    problems += [f"{e}: not <category>/<module>" for e in entries if not re.fullmatch(r"[a-z_]+/mod_\w+", e)]
    problems += [f"{n} listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
    problems += [f"{m} is loaded by modules.conf.xml but not built" for m in contract if m not in names]
    problems += [f"{n} is built but neither loaded by modules.conf.xml nor a documented extra"
                 for n in names if n not in contract and n not in documented]
    problems += [f"{line.strip()}: a single-# line is a disabled module to FreeSWITCH's build; comment with ##"
                 for line in text.splitlines() if re.match(r"\s*#(?!#)", line)]
    return problems


def reference_module_problems(text: str, mod_dir: Path) -> list[str]:
    """The reference build's installed modules are exactly the build list."""
    built = {so.name[:-len(".so")] for so in mod_dir.glob("*.so")}
    listed = set(module_names(text))
    return ([f"{m} is in the reference build but not in fs-image/modules.conf" for m in sorted(built - listed)]
            + [f"{m} is in fs-image/modules.conf but not in the reference build" for m in sorted(listed - built)])


def dockerfile_args(text: str) -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)", text, re.M))


def pin_problems(text: str) -> list[str]:
    """Every FROM and every git clone must name a version: a tag checked against its full commit
    in the same step, or a full commit checked out; never latest, a branch, or a clone left at
    its default."""
    args = dockerfile_args(text)

    def value(token: str) -> str:
        return re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), token)

    problems = []
    if re.search(r"\blatest\b", text):
        problems.append("'latest' appears")
    stages = set(re.findall(r"^FROM \S+ AS (\S+)", text, re.M))
    for image in re.findall(r"^FROM (\S+)", text, re.M):
        if image not in stages and not IMAGE_VERSION.match(value(image)):
            problems.append(f"FROM {value(image)} is not pinned to a version")
    steps = re.split(r"^(?=RUN |COPY |FROM |ARG |ENV |WORKDIR )", text, flags=re.M)
    for step in steps:
        for clone in re.finditer(r"git clone (?:--depth \d+ )?(?:--branch (?P<branch>\S+) )?"
                                 r"(?P<url>https://\S+?)(?:\.git)?(?:[ ]+(?P<dest>[^\s&\\]\S*))?\s", step):
            repo = clone.group("url").rsplit("/", 1)[-1]
            branch = clone.group("branch")
            name = re.escape(clone.group("dest") or repo)
            checkout = re.search(rf"cd {name} && git checkout (\S+)|git -C {name} checkout (\S+)", step)
            verified = re.search(rf'test "\$\(git -C {name} rev-parse HEAD\)" = "(\S+)"', step)
            if branch is not None:
                if not TAG.match(value(branch)):
                    problems.append(f"{repo}: --branch {value(branch)} is not a version tag")
                elif verified is None or not COMMIT.match(value(verified.group(1))):
                    problems.append(f"{repo}: tag {value(branch)} is not checked against a full commit")
            elif checkout is None or not COMMIT.match(value(checkout.group(1) or checkout.group(2))):
                problems.append(f"{repo}: cloned without a tag or a full commit checkout")
    return problems


def configure_line(text: str) -> str:
    """FreeSWITCH's ./configure invocation (with its continuation lines)."""
    match = re.search(r"\./configure --prefix=/usr/local/freeswitch(?:[^\n]*\\\n)*[^\n]*", text)
    return match.group(0) if match else ""


def layout_problems(text: str) -> list[str]:
    """--prefix alone selects FreeSWITCH's FHS layout (lib/freeswitch/mod, etc/freeswitch,
    share/freeswitch/grammar): every <prefix>/mod, /grammar, /conf path would be missing."""
    line = configure_line(text)
    if not line:
        return ["no ./configure --prefix=/usr/local/freeswitch"]
    problems = []
    if "--disable-fhs" not in line:
        used = sorted(set(re.findall(r"/usr/local/freeswitch/(mod|grammar|conf)\b", text)))
        problems.append(f"--prefix without --disable-fhs: FHS layout, so <prefix>/{{{','.join(used)}}} do not exist")
    # mod_audio_fork's Makefile takes only the libs from pkg-config: headers via CPPFLAGS
    lws_prefix = re.search(r"-S libwebsockets .*?-DCMAKE_INSTALL_PREFIX=(\S+)", text, re.S)
    if lws_prefix is None or f"-I{lws_prefix.group(1)}/include" not in line:
        problems.append("configure's CPPFLAGS does not name libwebsockets' include directory")
    return problems


def make_download_problems(text: str) -> list[str]:
    """mod_pocketsphinx's Makefile downloads (unpinned) whatever of these is absent when `make`
    runs: each must be provided by an earlier step, and the model checked by sha256 there."""
    make = text.find("make -j${BUILD_JOBS} \\\n    && make install")
    before = text[:make] if make >= 0 else ""
    needed = {"freeswitch/libs/sphinxbase-0.8": "sphinxbase", "freeswitch/libs/pocketsphinx-0.8": "pocketsphinx",
              "/usr/local/freeswitch/grammar/model/communicator": "the acoustic model"}
    problems = [f"{what} is not in place before make: make downloads it unpinned"
                for path, what in needed.items() if path not in before]
    if "sha256sum --check --strict /usr/src/pocketsphinx-model.sha256" not in before:
        problems.append("the model is not checked by sha256 before make")
    return problems


def compose_image_problems(service: dict) -> list[str]:
    match = re.fullmatch(r"\$\{FREESWITCH_IMAGE:-(?P<default>[^}]+)\}", service.get("image", ""))
    if match is None:
        return ["image is not ${FREESWITCH_IMAGE:-<default>}"]
    problems = []
    if not IMAGE_VERSION.match(match.group("default")) or "latest" in match.group("default"):
        problems.append(f"default image {match.group('default')} is not pinned to a version")
    if service.get("pull_policy") != "never":
        problems.append("pull_policy is not never")
    return problems


# -- the shipped files ---------------------------------------------------------------------------
def test_given_build_list_then_it_is_modules_conf_xml_plus_the_documented_extras():
    assert build_list_problems(BUILD_LIST, contract_modules()) == []
    assert extras(BUILD_LIST), "the extras section is documented in fs-image/modules.conf"


def test_given_the_reference_build_then_its_modules_are_exactly_the_build_list():
    require((REFERENCE / "mod").is_dir(), NO_REFERENCE)
    assert reference_module_problems(BUILD_LIST, REFERENCE / "mod") == []


def test_given_the_reference_build_then_the_dockerfile_uses_its_sources_and_configure_flags():
    require((REFERENCE / "README.md").is_file(), NO_REFERENCE)
    readme = (REFERENCE / "README.md").read_text()
    args = dockerfile_args(DOCKERFILE)
    pinned = " ".join(args.values())
    # the README's sources table: each row's refs (before any remark on other commits) are
    # pinned here, and every commit pinned here is one of the README's
    rows = [r for r in readme.splitlines() if r.startswith("| ") and "/" in r.split("|")[1]]
    assert len(rows) >= 7
    used_refs = set()
    for row in rows:
        ref_column = re.split(r"\. |\(a later", row.split("|")[2])[0]
        refs = re.findall(r"\b[0-9a-f]{7}\b", ref_column)
        assert refs, row
        used_refs |= set(refs)
        for ref in refs:
            assert re.search(rf"\b{ref}[0-9a-f]{{33}}\b", pinned), row
        for tag in re.findall(r"tag (v?[\d.]+)", row):
            assert tag in args.values(), row
    # the answering-machine modules are documented apart (amd/README.md: module | source | ...)
    amd_rows = [r for r in (REFERENCE / "amd" / "README.md").read_text().splitlines()
                if r.startswith("| mod_")]
    for row in amd_rows:
        for ref in re.findall(r"\b[0-9a-f]{7}\b", row.split("|")[2]):
            assert re.search(rf"\b{ref}[0-9a-f]{{33}}\b", pinned), row
            used_refs.add(ref)
    commits = {v[:7] for k, v in args.items() if k.endswith("_COMMIT")}
    assert commits == used_refs
    reference_flags = re.search(r"`\./configure ([^`]+)`", readme).group(1).split()
    line = configure_line(DOCKERFILE)
    assert [flag for flag in reference_flags if flag not in line] == []


def test_given_the_reference_build_then_its_model_and_dictionary_match_the_pinned_sums():
    require((REFERENCE / "grammar").is_dir() and shutil.which("sha256sum") is not None,
            NO_REFERENCE + " or no sha256sum")
    check = subprocess.run(["sha256sum", "--check", "--strict", "--quiet", ROOT / "fs-image" / "pocketsphinx-model.sha256"],
                           cwd=REFERENCE / "grammar", capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def _needed_sonames(tree: Path) -> set[str]:
    files = [tree / "bin" / "freeswitch", *sorted((tree / "mod").glob("*.so"))]
    out = subprocess.run(["readelf", "-d", *files], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", out))


# Always present in debian:*-slim (the C runtime apt itself needs): not listed in the runtime stage.
BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}


def test_given_the_reference_build_then_every_library_it_links_is_in_the_runtime_stage():
    """The runtime stage's apt list covers what the same build links: each NEEDED soname that
    the build does not ship itself is mapped to its Debian package on this (Debian) host."""
    require((REFERENCE / "mod").is_dir() and bool(shutil.which("readelf") and shutil.which("dpkg")),
            NO_REFERENCE + " or no readelf/dpkg")
    shipped = {p.name for p in (REFERENCE / "lib").iterdir()}
    runtime = DOCKERFILE.split(" AS runtime", 1)[1]
    installs = set(" ".join(re.findall(r"apt-get install([^&]*)", runtime)).replace("\\", " ").split())
    missing = {}
    for soname in sorted(_needed_sonames(REFERENCE) - shipped):
        owner = subprocess.run(["dpkg", "-S", f"*/{soname}"], capture_output=True, text=True)
        if owner.returncode != 0:
            missing[soname] = "no Debian package on this host provides it"
            continue
        package = owner.stdout.split(":", 1)[0]
        if package not in installs and package not in BASE_IMAGE_PACKAGES:
            missing[soname] = package
    assert missing == {}
    build = DOCKERFILE.split(" AS runtime", 1)[0]
    assert "libspeex-dev" in build  # FreeSWITCH's configure requires speex >= 1.2rc1, not only speexdsp


def test_given_dockerfile_then_the_install_layout_is_the_one_its_paths_use():
    assert layout_problems(DOCKERFILE) == []


def test_given_dockerfile_then_make_downloads_nothing():
    assert make_download_problems(DOCKERFILE) == []
    sums = dict(reversed(line.split("  ", 1)) for line in MODEL_SUMS.splitlines())
    assert set(sums) == {"default.dic", *(f"model/communicator/{f}" for f in (
        "feat.params", "mdef", "means", "noisedict", "sendump", "transition_matrices", "variances"))}
    assert all(re.fullmatch(r"[0-9a-f]{64}", s) for s in sums.values())


def test_given_dockerfile_then_every_upstream_source_and_base_image_is_pinned():
    assert pin_problems(DOCKERFILE) == []
    args = dockerfile_args(DOCKERFILE)
    assert args["FREESWITCH_TAG"] == "v1.10.12"
    assert 'test "$(git -C freeswitch rev-parse HEAD)" = "${FREESWITCH_COMMIT}"' in DOCKERFILE  # moved tag = failed build


def test_given_dockerfile_then_out_of_tree_modules_land_where_the_build_list_expects_them():
    entries = {e.rsplit("/", 1)[-1]: e for e in build_list(BUILD_LIST)}
    for module in ("mod_audio_fork", "mod_bcg729", "mod_amd"):
        assert f"src/mod/{entries[module]}/Makefile" in DOCKERFILE, module  # registered in configure.ac
        assert re.search(rf"(cp|COPY)\s.*{module}.*src/mod/{entries[module].split('/')[0]}/", DOCKERFILE), module
    assert "COPY modules.conf freeswitch/modules.conf" in DOCKERFILE
    assert (ROOT / "fs-image" / "mod_bcg729.Makefile.am").is_file()
    assert (ROOT / "fs-image" / "mod_amd.Makefile.am").is_file()
    # the reference build's patch (when the reference tree is here), applied before the module
    # is copied into the tree
    ours = (ROOT / "fs-image" / "mod_amd-classify-frame.patch").read_bytes()
    if (REFERENCE / "amd").is_dir():
        assert ours == (REFERENCE / "amd" / "mod_amd-classify-frame.patch").read_bytes()
    assert "patch -p1 < /usr/src/mod_amd-classify-frame.patch" in DOCKERFILE


def test_given_dockerfile_then_it_installs_where_compose_runs_it_as_a_non_root_user():
    assert "--prefix=/usr/local/freeswitch" in DOCKERFILE
    fs = COMPOSE["services"]["freeswitch"]
    assert fs["entrypoint"] == ["/usr/local/freeswitch/bin/freeswitch"]
    assert "/usr/local/freeswitch/bin/fs_cli" in fs["healthcheck"]["test"][1]
    runtime = DOCKERFILE.split(" AS runtime", 1)[1]
    users = re.findall(r"^USER (\S+)", runtime, re.M)
    assert users and users[-1] not in ("root", "0")
    installs = " ".join(re.findall(r"apt-get install[^&]*", runtime))
    assert not re.search(r"-dev\b|build-essential|\bgit\b|cmake|autoconf", installs)
    assert "libflite1" in installs and "flite1-dev" in DOCKERFILE  # mod_flite against Debian's flite


def test_given_dockerfile_then_the_pocketsphinx_model_is_baked_in_and_checked():
    assert "grammar/model/communicator" in DOCKERFILE and "grammar/default.dic" in DOCKERFILE


def test_given_compose_then_freeswitch_defaults_to_the_pinned_site_image_and_never_pulls():
    fs = COMPOSE["services"]["freeswitch"]
    assert compose_image_problems(fs) == []
    assert fs["image"].endswith(":-saas-sbc-freeswitch:1.10.12-2}")


# -- the checkers fail when the contract breaks ---------------------------------------------
def test_given_a_module_missing_from_or_added_to_the_build_list_then_both_are_reported():
    broken = BUILD_LIST.replace("asr_tts/mod_flite\n", "").replace("## extras", "applications/mod_lua\n## extras")
    assert build_list_problems(broken, contract_modules()) == [
        "mod_flite is loaded by modules.conf.xml but not built",
        "mod_lua is built but neither loaded by modules.conf.xml nor a documented extra"]


def test_given_a_module_added_to_modules_conf_xml_only_then_the_build_list_is_short():
    assert build_list_problems(BUILD_LIST, contract_modules() + ("mod_amr",)) == [
        "mod_amr is loaded by modules.conf.xml but not built"]


def test_given_an_extra_that_modules_conf_xml_starts_loading_then_the_list_still_holds():
    assert build_list_problems(BUILD_LIST, contract_modules() + ("mod_tone_stream",)) == []


def test_given_a_single_hash_comment_then_it_is_reported_as_a_disabled_module():
    assert build_list_problems("# a comment\n" + BUILD_LIST, contract_modules()) == [
        "# a comment: a single-# line is a disabled module to FreeSWITCH's build; comment with ##"]


def test_given_a_reference_tree_that_differs_then_each_difference_is_reported(tmp_path):
    for name in [*module_names(BUILD_LIST), "mod_lua"]:
        (tmp_path / f"{name}.so").write_bytes(b"")
    (tmp_path / "mod_flite.so").unlink()
    assert reference_module_problems(BUILD_LIST, tmp_path) == [
        "mod_lua is in the reference build but not in fs-image/modules.conf",
        "mod_flite is in fs-image/modules.conf but not in the reference build"]


def test_given_the_fhs_layout_or_no_lws_headers_then_both_are_reported():
    broken = DOCKERFILE.replace(" --disable-fhs", "").replace('CPPFLAGS="-I/usr/local/include"', "")
    assert layout_problems(broken) == [
        "--prefix without --disable-fhs: FHS layout, so <prefix>/{conf,grammar,mod} do not exist",
        "configure's CPPFLAGS does not name libwebsockets' include directory"]


def test_given_pocketsphinx_left_to_make_then_each_download_is_reported():
    start = DOCKERFILE.index("COPY pocketsphinx-model.sha256")
    end = DOCKERFILE.index("\n\n", start)
    assert make_download_problems(DOCKERFILE[:start] + DOCKERFILE[end:]) == [
        "sphinxbase is not in place before make: make downloads it unpinned",
        "pocketsphinx is not in place before make: make downloads it unpinned",
        "the acoustic model is not in place before make: make downloads it unpinned",
        "the model is not checked by sha256 before make"]


def test_given_unpinned_sources_then_each_is_reported():
    assert pin_problems(DOCKERFILE.replace("ARG SOFIA_SIP_TAG=v1.13.17", "ARG SOFIA_SIP_TAG=master")) == [
        "sofia-sip: --branch master is not a version tag"]
    assert pin_problems(DOCKERFILE.replace(
        "ARG SPANDSP_COMMIT=0d2e6ac65e0e8f53d652665a743015a88bf048d4", "ARG SPANDSP_COMMIT=main")) == [
        "spandsp: cloned without a tag or a full commit checkout"]
    no_checkout = DOCKERFILE.replace("    && git -C mod_bcg729 checkout ${MOD_BCG729_COMMIT} \\\n", "")
    assert pin_problems(no_checkout) == ["mod_bcg729: cloned without a tag or a full commit checkout"]
    no_pocketsphinx_pin = DOCKERFILE.replace(
        "    && git -C freeswitch/libs/pocketsphinx-0.8 checkout ${POCKETSPHINX_COMMIT} \\\n", "")
    assert pin_problems(no_pocketsphinx_pin) == ["pocketsphinx: cloned without a tag or a full commit checkout"]
    unchecked_tag = DOCKERFILE.replace('    && test "$(git -C libwebsockets rev-parse HEAD)" = "${LIBWEBSOCKETS_COMMIT}" \\\n', "")
    assert pin_problems(unchecked_tag) == ["libwebsockets: tag v4.3.3 is not checked against a full commit"]
    short = DOCKERFILE.replace("ARG BCG729_COMMIT=9ada79d7ff53815e85432e7442810a2fd49dbd0e", "ARG BCG729_COMMIT=9ada79d")
    assert pin_problems(short) == ["bcg729: tag 1.0.4 is not checked against a full commit"]
    assert pin_problems(DOCKERFILE.replace("ARG DEBIAN_IMAGE=debian:12.8-slim", "ARG DEBIAN_IMAGE=debian:latest")) == [
        "'latest' appears", "FROM debian:latest is not pinned to a version", "FROM debian:latest is not pinned to a version"]


def test_given_an_unpinned_compose_default_then_it_is_reported():
    fs = dict(COMPOSE["services"]["freeswitch"])
    assert compose_image_problems({**fs, "image": "${FREESWITCH_IMAGE:-drachtio/drachtio-freeswitch-mrf:latest}"}) == [
        "default image drachtio/drachtio-freeswitch-mrf:latest is not pinned to a version"]
    assert compose_image_problems({**fs, "image": "saas-sbc-freeswitch:1.10.12-2"}) == [
        "image is not ${FREESWITCH_IMAGE:-<default>}"]
    assert compose_image_problems({**fs, "pull_policy": "missing"}) == ["pull_policy is not never"]


def test_given_gather_grammar_then_it_is_the_one_the_gather_verb_names_and_every_rule_is_defined():
    from app.verbs.gather import SPEECH_GRAMMAR

    grammar = (ROOT / "fs-image" / f"{SPEECH_GRAMMAR}.gram").read_text()
    assert grammar.startswith("#JSGF V1.0;")
    assert re.search(rf"^grammar {SPEECH_GRAMMAR};$", grammar, re.M)
    body = re.sub(r"/\*.*?\*/", "", grammar, flags=re.S)
    defined = set(re.findall(r"^(?:public\s+)?<(\w+)>\s*=", body, re.M))
    used = set(re.findall(r"<(\w+)>", body))
    assert SPEECH_GRAMMAR in defined and used <= defined, used - defined
    # mod_pocketsphinx reads <grammar_dir>/<name>.gram; the build checks its words are in the dictionary
    assert f"COPY {SPEECH_GRAMMAR}.gram /usr/local/freeswitch/grammar/{SPEECH_GRAMMAR}.gram" in DOCKERFILE


def run_steps(text: str) -> list[str]:
    """Each RUN instruction's shell command, continuation lines joined as Docker joins them."""
    joined = re.sub(r"\\\n", " ", text)
    return [m.group(1) for m in re.finditer(r"^RUN (.+)$", joined, re.M)]


def test_given_dockerfile_then_every_run_step_is_valid_bash():
    """Docker runs them with SHELL ["/bin/bash", "-o", "pipefail", "-c"]: a quoting slip would
    only show up hours into a build; ``bash -n`` finds it now."""
    steps = run_steps(DOCKERFILE)
    assert len(steps) >= 10
    for step in steps:
        check = subprocess.run(["bash", "-n", "-o", "pipefail", "-c", step], capture_output=True, text=True)
        assert check.returncode == 0, f"{step[:120]}...: {check.stderr}"


def test_given_a_broken_run_step_then_bash_refuses_it():
    broken = run_steps(DOCKERFILE.replace('"$(git -C freeswitch rev-parse HEAD)"', '"$(git -C freeswitch rev-parse HEAD"'))
    assert any(subprocess.run(["bash", "-n", "-c", s], capture_output=True).returncode != 0 for s in broken)
