"""fs-image/ (the FreeSWITCH image ops build) against the module contract, checked by reading:
Docker is not runnable here. The checkers are plain functions so the tests can also prove they
refuse a broken build list, an unpinned source and an unpinned compose default."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from app.routing.node_modules import contract_modules

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "fs-image" / "Dockerfile").read_text()
BUILD_LIST = (ROOT / "fs-image" / "modules.conf").read_text()
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())

TAG = re.compile(r"^v?\d+(\.\d+)+$")         # v1.10.12, 1.0.4
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
IMAGE_VERSION = re.compile(r"^[^:$]+:\d+(\.\d+)+[-\w.]*$")  # name:12.8-slim, name:1.10.12-1


def build_list(text: str) -> list[str]:
    """``<category>/<module>`` lines of a FreeSWITCH modules.conf, comments and blanks out."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def build_list_problems(text: str, contract: tuple[str, ...]) -> list[str]:
    problems = []
    entries = build_list(text)
    names = [entry.rsplit("/", 1)[-1] for entry in entries]
    problems += [f"{e}: not <category>/<module>" for e in entries if not re.fullmatch(r"[a-z_]+/mod_\w+", e)]
    problems += [f"{n} listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
    problems += [f"{m} is loaded by modules.conf.xml but not built" for m in contract if m not in names]
    problems += [f"{n} is built but modules.conf.xml does not load it" for n in names if n not in contract]
    return problems


def dockerfile_args(text: str) -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)", text, re.M))


def pin_problems(text: str) -> list[str]:
    """Every FROM and every git clone must name a version: a tag (checked against its commit
    where one is given) or a commit; never latest, a branch, or a clone left at its default."""
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
        for clone in re.finditer(r"git clone (?P<opts>(?:--\S+ \S+ )*?)(?:--depth \d+ )?"
                                 r"(?:--branch (?P<branch>\S+) )?(?P<url>https://\S+?)(?:\.git)?\s", step):
            repo = clone.group("url").rsplit("/", 1)[-1]
            branch = clone.group("branch")
            name = re.escape(repo)
            checkout = re.search(rf"cd {name} && git checkout (\S+)|git -C {name} checkout (\S+)", step)
            if branch is not None:
                if not TAG.match(value(branch)):
                    problems.append(f"{repo}: --branch {value(branch)} is not a version tag")
            elif checkout is None or not COMMIT.match(value(checkout.group(1) or checkout.group(2))):
                problems.append(f"{repo}: cloned without a tag or a commit checkout")
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
def test_given_build_list_then_it_is_exactly_the_modules_modules_conf_xml_loads():
    assert build_list_problems(BUILD_LIST, contract_modules()) == []


def test_given_dockerfile_then_every_upstream_source_and_base_image_is_pinned():
    assert pin_problems(DOCKERFILE) == []
    args = dockerfile_args(DOCKERFILE)
    assert args["FREESWITCH_TAG"] == "v1.10.12"
    assert 'rev-parse --short=7 HEAD)" = "${FREESWITCH_COMMIT}"' in DOCKERFILE  # moved tag = failed build


def test_given_dockerfile_then_out_of_tree_modules_land_where_the_build_list_expects_them():
    entries = {e.rsplit("/", 1)[-1]: e for e in build_list(BUILD_LIST)}
    for module in ("mod_audio_fork", "mod_bcg729"):
        assert f"src/mod/{entries[module]}/Makefile" in DOCKERFILE, module  # registered in configure.ac
        assert re.search(rf"(cp|COPY)\s.*{module}.*src/mod/{entries[module].split('/')[0]}/", DOCKERFILE), module
    assert "COPY modules.conf freeswitch/modules.conf" in DOCKERFILE
    assert (ROOT / "fs-image" / "mod_bcg729.Makefile.am").is_file()


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
    assert fs["image"].endswith(":-saas-sbc-freeswitch:1.10.12-1}")


# -- the checkers fail when the contract breaks ---------------------------------------------
def test_given_a_module_missing_from_or_added_to_the_build_list_then_both_are_reported():
    broken = BUILD_LIST.replace("asr_tts/mod_flite\n", "") + "\napplications/mod_lua\n"
    assert build_list_problems(broken, contract_modules()) == [
        "mod_flite is loaded by modules.conf.xml but not built",
        "mod_lua is built but modules.conf.xml does not load it"]


def test_given_a_module_added_to_modules_conf_xml_only_then_the_build_list_is_short():
    assert build_list_problems(BUILD_LIST, contract_modules() + ("mod_amr",)) == [
        "mod_amr is loaded by modules.conf.xml but not built"]


def test_given_unpinned_sources_then_each_is_reported():
    assert pin_problems(DOCKERFILE.replace("ARG SOFIA_SIP_TAG=v1.13.17", "ARG SOFIA_SIP_TAG=master")) == [
        "sofia-sip: --branch master is not a version tag"]
    assert pin_problems(DOCKERFILE.replace(
        "ARG SPANDSP_COMMIT=0d2e6ac65e0e8f53d652665a743015a88bf048d4", "ARG SPANDSP_COMMIT=main")) == [
        "spandsp: cloned without a tag or a commit checkout"]
    no_checkout = DOCKERFILE.replace("    && git -C mod_bcg729 checkout ${MOD_BCG729_COMMIT} \\\n", "")
    assert pin_problems(no_checkout) == ["mod_bcg729: cloned without a tag or a commit checkout"]
    assert pin_problems(DOCKERFILE.replace("ARG DEBIAN_IMAGE=debian:12.8-slim", "ARG DEBIAN_IMAGE=debian:latest")) == [
        "'latest' appears", "FROM debian:latest is not pinned to a version", "FROM debian:latest is not pinned to a version"]


def test_given_an_unpinned_compose_default_then_it_is_reported():
    fs = dict(COMPOSE["services"]["freeswitch"])
    assert compose_image_problems({**fs, "image": "${FREESWITCH_IMAGE:-drachtio/drachtio-freeswitch-mrf:latest}"}) == [
        "default image drachtio/drachtio-freeswitch-mrf:latest is not pinned to a version"]
    assert compose_image_problems({**fs, "image": "saas-sbc-freeswitch:1.10.12-1"}) == [
        "image is not ${FREESWITCH_IMAGE:-<default>}"]
    assert compose_image_problems({**fs, "pull_policy": "missing"}) == ["pull_policy is not never"]


def test_given_gather_grammar_then_it_is_the_one_the_gather_verb_names_and_every_rule_is_defined():
    from esl.verbs.gather import SPEECH_GRAMMAR

    grammar = (ROOT / "fs-image" / f"{SPEECH_GRAMMAR}.gram").read_text()
    assert grammar.startswith("#JSGF V1.0;")
    assert re.search(rf"^grammar {SPEECH_GRAMMAR};$", grammar, re.M)
    body = re.sub(r"/\*.*?\*/", "", grammar, flags=re.S)
    defined = set(re.findall(r"^(?:public\s+)?<(\w+)>\s*=", body, re.M))
    used = set(re.findall(r"<(\w+)>", body))
    assert SPEECH_GRAMMAR in defined and used <= defined, used - defined
    # mod_pocketsphinx reads <grammar_dir>/<name>.gram; the build checks its words are in the dictionary
    assert f"COPY {SPEECH_GRAMMAR}.gram /usr/local/freeswitch/grammar/{SPEECH_GRAMMAR}.gram" in DOCKERFILE
