"""Static checks of the FreeSWITCH config we ship (fs-conf/ + dialplan/), run by the tests.

FreeSWITCH only tells you about a broken config at boot, in a container log, on a machine we
cannot run here. So this replays what its loader does (switch_xml.c ``preprocess``: line by
line, ``$${var}`` expansion, ``X-PRE-PROCESS`` set/env-set/include with globs relative to the
including file, ``<include>`` wrapper lines dropped) and then checks:

- every XML file parses on its own, and the assembled document parses;
- every ``$${var}`` is defined (vars.xml, or a core variable FreeSWITCH sets itself) before use;
- every module the dialplan, the verbs (esl/, app/) and the config need is loaded by
  modules.conf.xml, and nothing is loaded that nothing uses ("exactly the modules used");
- ACL names referenced by sofia/event_socket exist in acl.conf.
"""
from __future__ import annotations

import glob
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

# Variables FreeSWITCH's core defines before reading any config (switch_core.c).
CORE_VARIABLES = frozenset({
    "base_dir", "recordings_dir", "sounds_dir", "conf_dir", "log_dir", "run_dir", "db_dir",
    "mod_dir", "htdocs_dir", "script_dir", "temp_dir", "grammar_dir", "fonts_dir", "images_dir",
    "certs_dir", "storage_dir", "cache_dir", "data_dir", "localstate_dir", "core_uuid",
    "hostname", "switchname", "switch_serial", "local_ip_v4", "local_mask_v4", "local_ip_v6",
})

# Dialplan applications / api commands -> the module that provides them.
APPLICATION_MODULES: dict[str, str] = {
    **{app: "mod_dptools" for app in (
        "set", "export", "unset", "answer", "pre_answer", "ring_ready", "hangup", "respond",
        "log", "bridge", "playback", "sleep", "park", "record_session", "stop_record_session",
        "play_and_get_digits", "play_and_detect_speech", "detect_speech", "speak", "transfer",
        "info", "send_dtmf", "sched_hangup", "say", "echo", "event", "hash", "multiset",
        "endless_playback", "read", "record", "break", "displace_session", "detect_silence")},
    "socket": "mod_event_socket",
    "conference": "mod_conference",
    "uuid_audio_fork": "mod_audio_fork",
    "amd": "mod_amd",
    "avmd_start": "mod_avmd",
    "avmd_stop": "mod_avmd",
}

# Tokens in code or config (file schemes, engines, endpoints) -> module.
TOKEN_MODULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"sofia/"), "mod_sofia"),
    (re.compile(r"http_cache://"), "mod_http_cache"),
    (re.compile(r"local_stream://"), "mod_local_stream"),
    (re.compile(r"(tone|silence)_stream://"), "mod_tone_stream"),
    (re.compile(r"\bflite\b"), "mod_flite"),
    (re.compile(r"\bpocketsphinx\b"), "mod_pocketsphinx"),
    (re.compile(r"\buuid_audio_fork\b"), "mod_audio_fork"),
    (re.compile(r"\.mp3\b|\bmp3\b"), "mod_shout"),
    (re.compile(r"\.wav\b|\bwav\b"), "mod_sndfile"),
    (re.compile(r"""["'](reloadacl|uuid_[a-z_]+)\b"""), "mod_commands"),
)

# Loaded without being named anywhere, and why.
IMPLICIT_MODULES: dict[str, str] = {
    "mod_console": "logging to the container's stdout",
    "mod_logfile": "log file for post-mortems",
    "mod_dialplan_xml": "the XML dialplan itself (sofia profile dialplan=XML)",
    "mod_opus": "OPUS codec (codec prefs)",
    "mod_spandsp": "G722 codec (codec prefs)",
    "mod_bcg729": "G729 codec with transcoding (codec prefs)",
    "mod_native_file": "native-codec prompt files",
    "mod_say_en": "English say/phrase support for the default language",
    "mod_event_socket": "inbound ESL for the controller",
    "mod_sofia": "SIP",
}

_VAR = re.compile(r"\$\$\{([^}]+)\}")
_PRE = re.compile(r"<X-PRE-PROCESS\s+cmd=\"([^\"]+)\"\s+data=\"([^\"]*)\"\s*/>", re.I)
_EXECUTE_CALL = re.compile(r"""\.execute\(\s*["']([a-z_]+)["']""")
_API_CALL = re.compile(r"""\.api\(\s*f?["']([a-z_]+)""")


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    env_only: set[str] = field(default_factory=set)
    loaded_modules: list[str] = field(default_factory=list)
    required_modules: dict[str, set[str]] = field(default_factory=dict)  # module -> reasons
    document: ET.Element | None = None

    def need(self, module: str, reason: str) -> None:
        self.required_modules.setdefault(module, set()).add(reason)


def _parse_file(path: Path, report: Report) -> None:
    try:
        ET.parse(path)
    except ET.ParseError as exc:
        report.problems.append(f"{path}: XML does not parse: {exc}")


def _preprocess(path: Path, report: Report, mounts: dict[Path, Path], out: list[str], depth: int = 0) -> None:
    if depth > 100:
        report.problems.append(f"{path}: include recursion too deep")
        return
    text = path.read_text()
    for number, line in enumerate(text.splitlines(), 1):
        for name in _VAR.findall(line):
            if name not in report.variables and name not in CORE_VARIABLES:
                report.problems.append(f"{path}:{number}: $${{{name}}} is not defined before use")
        expanded = _VAR.sub(lambda m: report.variables.get(m.group(1), f"core:{m.group(1)}"), line)
        if "<include>" in line or "</include>" in line or "<?" in line:
            continue
        match = _PRE.search(line)
        if match:
            cmd, data = match.group(1).lower(), _VAR.sub(
                lambda m: report.variables.get(m.group(1), ""), match.group(2))
            if cmd == "set":
                name, _, value = data.partition("=")
                report.variables[name.strip()] = value.strip()
            elif cmd == "env-set":
                name, _, env = data.partition("=")
                if not env.startswith("$"):
                    report.problems.append(f"{path}:{number}: env-set data must be name=$ENVVAR")
                if name.strip() not in report.variables:
                    report.env_only.add(name.strip())
                    report.variables[name.strip()] = f"env:{env[1:]}"
            elif cmd == "include":
                pattern = os.path.normpath(data if data.startswith("/") else os.path.join(path.parent, data))
                for target in sorted(glob.glob(_remap(pattern, mounts))):
                    _preprocess(Path(target), report, mounts, out, depth + 1)
            else:
                report.problems.append(f"{path}:{number}: unsupported X-PRE-PROCESS cmd {cmd!r}")
            continue
        out.append(expanded)


def _remap(pattern: str, mounts: dict[Path, Path]) -> str:
    """Container mount points (conf/dialplan) -> repo directories."""
    for mount, source in mounts.items():
        prefix = str(mount)
        if pattern == prefix or pattern.startswith(prefix + "/"):
            return str(source) + pattern[len(prefix):]
    return pattern


def validate(conf_dir: Path, dialplan_dir: Path, code_dirs: tuple[Path, ...] = ()) -> Report:
    report = Report()
    conf_dir, dialplan_dir = conf_dir.resolve(), dialplan_dir.resolve()
    for path in sorted(list(conf_dir.rglob("*.xml")) + list(dialplan_dir.rglob("*.xml"))):
        _parse_file(path, report)

    lines: list[str] = []
    _preprocess(conf_dir / "freeswitch.xml", report, {conf_dir / "dialplan": dialplan_dir}, lines)
    try:
        report.document = ET.fromstring("\n".join(lines))
    except ET.ParseError as exc:
        report.problems.append(f"assembled document does not parse: {exc}")
        return report
    doc = report.document

    def configuration(name: str) -> ET.Element | None:
        return doc.find(f"./section[@name='configuration']/configuration[@name='{name}']")

    modules_conf = configuration("modules.conf")
    if modules_conf is None:
        report.problems.append("modules.conf is missing")
        return report
    report.loaded_modules = [m.get("module", "") for m in modules_conf.iter("load")]
    duplicates = {m for m in report.loaded_modules if report.loaded_modules.count(m) > 1}
    for module in sorted(duplicates):
        report.problems.append(f"modules.conf loads {module} more than once")

    # Dialplan applications
    for action in doc.iter("action"):
        app = action.get("application", "")
        app_module = APPLICATION_MODULES.get(app)
        if app_module is None:
            report.problems.append(f"dialplan application {app!r} has no known module")
        else:
            report.need(app_module, f"dialplan application {app}")
    # Config needs
    if configuration("sofia.conf") is not None:
        report.need("mod_sofia", "sofia.conf")
    if configuration("event_socket.conf") is not None:
        report.need("mod_event_socket", "event_socket.conf")
    for name in ("conference.conf", "local_stream.conf", "http_cache.conf", "pocketsphinx.conf", "amd.conf",
                 "avmd.conf"):
        if configuration(name) is not None:
            report.need("mod_" + name.split(".")[0], name)
    # Code: verbs and session
    for code_dir in code_dirs:
        for source in sorted(code_dir.rglob("*.py")):
            if source.resolve() == Path(__file__).resolve():
                continue  # this module names every token on purpose
            text = source.read_text()
            where = source.name
            for app in _EXECUTE_CALL.findall(text):
                app_module = APPLICATION_MODULES.get(app)
                if app_module is None:
                    report.problems.append(f"{source}: application {app!r} has no known module")
                else:
                    report.need(app_module, f"{where} executes {app}")
            for pattern, module in TOKEN_MODULES:
                if pattern.search(text):
                    report.need(module, f"{where} uses {pattern.pattern}")

    loaded = set(report.loaded_modules)
    for module, reasons in sorted(report.required_modules.items()):
        if module not in loaded:
            report.problems.append(f"{module} is needed ({', '.join(sorted(reasons))}) but not loaded")
    for module in sorted(loaded - set(report.required_modules) - set(IMPLICIT_MODULES)):
        report.problems.append(f"{module} is loaded but nothing uses it")

    # ACL references
    acl = configuration("acl.conf")
    lists = {n.get("name") for n in acl.iter("list")} if acl is not None else set()
    for conf_name, xpath in (("sofia.conf", ".//settings/param[@name='apply-inbound-acl']"),
                             ("event_socket.conf", ".//settings/param[@name='apply-inbound-acl']")):
        conf = configuration(conf_name)
        if conf is None:
            continue
        for param in conf.findall(xpath):
            if param.get("value") not in lists:
                report.problems.append(f"{conf_name} applies ACL {param.get('value')!r} not defined in acl.conf")
    return report
