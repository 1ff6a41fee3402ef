"""Goldens in the documents' own language, checked (issue 18).

A corpus in English, German, French and Japanese (tests/language_corpus.py) runs through the real
``openai`` SDK over HTTP to the fake server answering synth's prompts (tests/synth_replies.py),
which writes in the language the prompt names (tests/language_replies.py) unless told to ignore
it or to answer wrongly. Languages are judged here with lingua directly, not from what synth
recorded.
"""

from __future__ import annotations

import json
import random
import warnings
from collections import Counter
from pathlib import Path

import pytest
import synth_replies
from fake_openai import FakeOpenAI
from language_corpus import TEXTS, write_corpus

from synth import Synthesizer, _language
from synth._language import check_language, detect_language, language_name
from synth._words import content_words, overlap, words
from synth.contexts.config import ContextConstructionConfig
from synth.data import Context, Document
from synth.generate import expected, inputs
from synth.generate.citations import SourceChunk
from synth.generate.config import GenerationConfig
from synth.generate.dedup import Deduplicator
from synth.generate.difficulty import DifficultyIndex
from synth.generate.draft import Draft
from synth.ingest.chunking import chunk_documents
from synth.store import HashEmbedder

GOLDENS = 8
WRONG_PROMPT = "because it is written in the wrong language"


# ---- detection and the check ---------------------------------------------------------------------


def test_each_corpus_text_is_detected_in_its_language() -> None:
    for code, text in TEXTS.items():
        assert detect_language(text) == code


def test_a_short_or_doubtful_text_is_unsure_never_a_mismatch() -> None:
    assert check_language("Refund?", "de").status == "unsure"  # under MIN_LETTERS
    assert check_language("OK", "ja").status == "unsure"
    # English and German mixed half and half: no language clearly ahead
    assert not check_language("Hi, quick question: Wie lange dauert die Garantie?", "en").mismatch
    verdict = check_language("Wie lange dauert die Garantie für die Batterie?", "en")
    assert verdict.mismatch and verdict.found == "de"
    assert "German" in verdict.reason("input") and "English" in verdict.reason("input")
    assert check_language("保証期間はどのくらいですか？", "en").mismatch
    assert check_language("What is the warranty period of the battery?", "ja").mismatch
    assert check_language("保証期間はどのくらいですか？", "ja").status == "match"


def test_a_text_in_its_language_is_settled_by_trigrams_and_only_doubt_loads_the_full_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the full models for short texts take seconds to load, holding the interpreter (and a run's
    # event loop): a run whose model writes in the right language must never need them
    built: list[bool] = []
    real = _language._check_detector

    def spy(codes: frozenset[str], quick: bool = False) -> object:
        built.append(quick)
        return real(codes, quick)

    monkeypatch.setattr(_language, "_check_detector", spy)
    _language._full_confidences.cache_clear()
    _language._quick_confidences.cache_clear()
    right = {
        "en": "How long does the warranty of the home battery last?",
        "de": "Wie lange dauert die Garantie für die Batterie im Keller?",
        "fr": "Combien de temps dure la garantie de la batterie domestique ?",
        "es": "¿Cuánto tiempo dura la garantía de la batería de casa?",
    }
    for code, text in right.items():
        assert check_language(text, code).status == "match", text
    assert built and all(built)  # trigrams alone
    built.clear()
    _language._quick_confidences.cache_clear()  # the same text's trigram scores are kept
    verdict = check_language(right["de"], "en")
    assert verdict.mismatch and verdict.found == "de"
    assert built == [True, False]  # doubted, then judged with the full models


def test_the_full_models_a_check_needs_are_the_corpus_languages_and_their_scripts_common_ones() -> (
    None
):
    latin = set(_language.LATIN_COMMON)
    assert set(_language.full_models_for("en")) == latin
    assert _language.full_models_for("en", ["de"])[0] == "en"  # loaded first, with one other
    assert set(_language.full_models_for("en", ["vi", ""])) == latin | {"vi"}
    assert _language.full_models_for("ru") == ["ru"]  # Cyrillic: no Latin model is weighed
    assert _language.full_models_for("ja", ["ko"]) == ["ja", "ko"]


def test_the_full_models_load_one_language_at_a_time_and_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each load holds the interpreter's lock: a run's loop may run only between two of them
    import lingua

    loads: list[int] = []
    real = lingua.LanguageDetectorBuilder.from_iso_codes_639_1

    def counting(*isos: object) -> object:
        loads.append(len(isos))
        return real(*isos)

    monkeypatch.setattr(lingua.LanguageDetectorBuilder, "from_iso_codes_639_1", counting)
    monkeypatch.setattr(_language, "_full_loaded", set())
    _language.load_full_models(["sv", "nl"])
    _language.load_full_models(["nl", "sv"])  # loaded: nothing again
    assert loads == [2, 2] and _language._full_loaded == {"sv", "en", "nl"}


def test_a_run_stopped_while_the_full_models_load_ends_without_waiting_for_the_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a load cannot be stopped midway and takes seconds of a core: a Ctrl-C that cancels the run
    # must not wait for it (asyncio.to_thread's pool is joined when the loop ends)
    import asyncio
    import threading

    loading, release = threading.Event(), threading.Event()

    def blocked_load(codes: object) -> None:
        loading.set()
        release.wait()

    monkeypatch.setattr(_language, "load_full_models", blocked_load)
    doubtful = "Wie lange dauert die Garantie für die Batterie im Keller?"

    async def run() -> None:
        task = asyncio.ensure_future(_language.prepare_checks([doubtful], "en"))
        while not loading.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    ended = threading.Event()
    runner = threading.Thread(target=lambda: (asyncio.run(run()), ended.set()), daemon=True)
    try:
        runner.start()
        assert ended.wait(60), "the run's end waited for the language models' load"
    finally:
        release.set()


def test_a_text_prepared_then_checked_is_scored_by_the_trigrams_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a run prepares each written input (off the loop) and then checks it: the trigrams' scores,
    # a third of a run's language CPU, are kept from the one for the other
    import asyncio

    asked: list[str] = []
    real = _language._confidences

    def spy(detector: object, text: str) -> dict[str, float]:
        asked.append(text)
        return real(detector, text)

    monkeypatch.setattr(_language, "_confidences", spy)
    _language._quick_confidences.cache_clear()
    text = "How long does the warranty of the heat pump last in a cold winter?"
    asyncio.run(_language.prepare_checks([text], "en"))
    assert check_language(text, "en").status == "match"
    assert asked == [text]


def test_made_up_words_and_bare_lists_of_nouns_get_no_language() -> None:
    # trigrams alone call the list Norwegian, and lingua is sure the letters are German
    assert detect_language("photovoltaic cells inverter rooftop sunlight panels file 0") is None
    made_up = "Tkgnkuh jxfddcu zvxi lorpw. Gvdw lcltv ygfv yilo qwertz. " * 4
    assert detect_language(made_up) is None
    finnish = (
        "Akku varastoi energiaa päivällä ja vapauttaa sen yöllä, kun paneelit eivät tuota mitään. "
        "Täysi lataus kestää noin neljä tuntia aurinkoisena päivänä, ja pilvisenä päivänä akku "
        "latautuu hitaammin. Akku on asennettava sisätiloihin, kuivaan huoneeseen, ja akku on "
        "pidettävä poissa pakkasesta."
    )
    assert detect_language(finnish) == "fi"  # a language outside COMMON, when sure
    assert detect_language(finnish[:90]) is None  # ... and only with enough text to be sure


# ---- ingest, words, BM25 and dedup without spaces --------------------------------------------------


def test_chunks_record_their_language_and_japanese_is_cut_at_sentence_ends() -> None:
    ja = Document(id="d_ja", path="toshokan.txt", text=TEXTS["ja"].replace("\n\n", ""))
    chunks = chunk_documents([ja], chunk_size=40)
    assert len(chunks) > 3
    assert all(c.metadata["language"] == "ja" for c in chunks)
    # no paragraph breaks and no spaces: every cut falls after a sentence's or a clause's end
    assert all(c.text.endswith(("。", "、")) for c in chunks)
    assert all(c.text.endswith("。") for c in chunk_documents([ja], chunk_size=80))
    mixed = Document(id="d_mix", path="mix.txt", text=TEXTS["en"] + "\n\n" + TEXTS["de"])
    found = {c.metadata.get("language") for c in chunk_documents([mixed], chunk_size=60)}
    assert {"en", "de"} <= found <= {"en", "de", None}  # a chunk too short to be sure has none


def test_japanese_words_are_bigrams_so_a_question_overlaps_its_source() -> None:
    source = "図書館の本は一人につき十冊まで、二週間借りることができます。"
    question = "図書館の本は何冊まで借りられますか？"
    assert "図書" in words(question) and "図書" in content_words(source)
    assert overlap(question, [source]) > 0.4
    assert overlap(question, ["電子書籍の貸出サービスでは、スマートフォンで読めます。"]) < 0.2


def test_bm25_ranks_the_japanese_source_first() -> None:
    paragraphs = [p for p in TEXTS["ja"].split("\n\n") if p.strip()]
    index = DifficultyIndex([f"c{i}" for i in range(len(paragraphs))], paragraphs)
    measured = index.measure("学習室の予約は何日前からできますか？", ["c2"])
    assert measured.bm25_rank == 1


def test_dedup_tells_japanese_near_duplicates_from_different_questions() -> None:
    texts = [
        "図書館の本は何冊まで借りられますか？",
        "図書館の本は何冊まで借りられますか。",
        "電子書籍はどの端末で読むことができますか？",
    ]
    dedup = Deduplicator(HashEmbedder(), threshold=0.9)
    actions = [dedup.offer(Draft(id=f"d{i}", input=t)).action for i, t in enumerate(texts)]
    assert actions == ["kept", "dropped", "kept"]


# ---- prompts -----------------------------------------------------------------------------------------


def test_prompts_name_the_language_and_stay_english() -> None:
    context = Context(id="c", chunk_ids=["k"], texts=[TEXTS["de"]], source_files=["a.txt"])
    prompt = inputs.build_prompt(context, 2, language="de")
    assert "Language: write every input in German." in prompt
    assert "You write questions" in prompt
    assert "Language:" not in inputs.build_prompt(context, 2)
    answer = expected.build_prompt(["Wie warm?"], context, language="ja")
    assert "write every answer (the quotes stay as the context has them) in Japanese" in answer


def test_a_cross_lingual_answer_is_grounded_by_its_quotes_found() -> None:
    chunk = SourceChunk(chunk_id="k", text=TEXTS["en"])
    quote = "A full charge takes about four hours on a sunny day."
    answer = expected.Answer(
        "Eine volle Ladung dauert an einem sonnigen Tag etwa vier Stunden.", (quote,)
    )
    cross = expected.check_answer(answer, [chunk], 0.5, "de", "en")
    assert cross.cross_lingual and cross.grounding.score == 1.0 and not cross.problem
    wrong = expected.check_answer(answer, [chunk], 0.5, "fr", "en")
    assert wrong.wrong_language and "French" in wrong.problem


# ---- whole runs over HTTP ------------------------------------------------------------------------------


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-languages")
    with FakeOpenAI(reply=synth_replies.reply) as fake:
        yield fake


def _run(
    server: FakeOpenAI, tmp_path: Path, languages: tuple[str, ...] = ("en", "de", "fr", "ja"), **kw
):
    docs = write_corpus(tmp_path / "docs", languages)
    synth = Synthesizer(
        "openai:fake-model",
        base_url=server.url,
        embedder="hash",
        cache=None,
        run_dir=tmp_path / "run",
        store_path=tmp_path / "store",
        context_construction_config=ContextConstructionConfig(chunk_size=80),
        **kw,
    )
    with synth:
        dataset = synth.generate_goldens_from_docs(str(docs), num_goldens=GOLDENS)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    return dataset, manifest


def _dropped(manifest: dict, reason: str) -> int:
    return sum(row["dropped"].get(reason, 0) for row in manifest["stages"])


def _rejects(tmp_path: Path) -> list[dict]:
    path = tmp_path / "run" / "rejects.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def test_auto_writes_every_golden_in_its_contexts_language(server, tmp_path: Path) -> None:
    dataset, manifest = _run(server, tmp_path)
    assert len(dataset) == GOLDENS
    for golden in dataset:
        code = detect_language(golden.context[0])
        assert golden.metadata["language"] == code
        assert check_language(golden.input, code).status == "match", golden.input
        assert check_language(golden.expected_output, code).status == "match"
    assert set(Counter(g.metadata["language"] for g in dataset)) == {"en", "de", "fr", "ja"}
    assert manifest["trust"]["per_language"] == dict(
        Counter(g.metadata["language"] for g in dataset)
    )
    asked = [r.prompt for r in server.requests_to("chat")]
    assert any("Language: write every input in Japanese." in p for p in asked)


def test_a_fixed_language_writes_every_golden_in_it(server, tmp_path: Path) -> None:
    generation = GenerationConfig(language="de")
    dataset, _ = _run(server, tmp_path, generation_config=generation)
    assert len(dataset) == GOLDENS
    for golden in dataset:
        assert golden.metadata["language"] == "de"
        assert check_language(golden.input, "de").status == "match", golden.input
        assert check_language(golden.expected_output, "de").status == "match"
    sources = {detect_language(g.context[0]) for g in dataset}
    assert sources - {"de"}, "some goldens come from documents in other languages"


def test_a_model_wrong_30_percent_of_the_time_still_gives_n_right_goldens(
    server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYNTH_REPLIES_WRONG_LANGUAGE", "0.3")
    dataset, manifest = _run(server, tmp_path)
    assert len(dataset) == GOLDENS
    for golden in dataset:
        code = golden.metadata["language"]
        assert code == detect_language(golden.context[0])
        assert not check_language(golden.input, code).mismatch, golden.input
        assert not check_language(golden.expected_output, code).mismatch
    asked_again = [r for r in server.requests_to("chat") if WRONG_PROMPT in r.prompt]
    assert asked_again, "inputs in the wrong language are asked again"
    dropped = _dropped(manifest, "wrong_language")
    assert dropped > 0
    rejected = [r for r in _rejects(tmp_path) if r["reason"] == "wrong_language"]
    assert len(rejected) >= dropped  # and the drops of spares started but not used (not counted)
    assert all("after it was asked again" in r["detail"] for r in rejected)


def test_a_model_that_ignores_the_language_gets_nothing_past_the_check(
    server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYNTH_REPLIES_IGNORE_LANGUAGE", "1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataset, manifest = _run(server, tmp_path, languages=("ja",))
    assert len(dataset) < GOLDENS and manifest["delivered"] == len(dataset)
    assert any("fewer" in str(w.message) or "short" in str(w.message) for w in caught)
    for golden in dataset:
        assert not check_language(golden.input, "ja").mismatch
    assert _dropped(manifest, "wrong_language") > 0
    assert any("wrong_language" in line for line in manifest["shortfall"])


def test_the_plan_lists_languages_found_and_goldens_each(server, tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    contexts = ContextConstructionConfig(chunk_size=80)
    with Synthesizer(
        "openai:fake-model",
        base_url=server.url,
        embedder="hash",
        store_path=tmp_path / "store",
        context_construction_config=contexts,
    ) as synth:
        plan = synth.plan_from_docs(str(docs), num_goldens=GOLDENS)
    assert set(plan.languages["chunks"]) == {"en", "de", "fr", "ja"}
    assert sum(plan.languages["goldens"].values()) == plan.goldens
    assert any(n.startswith("languages found:") for n in plan.notes)
    assert server.request_count("chat") == 0
    assert language_name("fr") == "French"


def test_chunks_are_detected_one_by_one_only_when_their_document_mixes_languages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import synth.ingest.chunking as chunking
    from synth import chunk_documents

    asked: list[str] = []
    monkeypatch.setattr(chunking, "detect_language", lambda text: asked.append(text) or "de")
    text = "\n\n".join(f"Absatz {i}: die Pumpe läuft nachts und wird geprüft." for i in range(30))

    def chunks(**metadata: object) -> list:
        document = Document(id="d", path="d.md", text=text, metadata=metadata)
        return chunk_documents([document], chunk_size=32)

    none_found = chunks(languages=[])  # no sample had a language: its chunks are not looked at
    assert not asked and all("language" not in c.metadata for c in none_found)
    one = chunks(languages=["fr"])  # one language throughout: every chunk gets it, unasked
    assert not asked and {c.metadata["language"] for c in one} == {"fr"}
    mixed = chunks(languages=["fr", "de"])
    assert len(asked) == len(mixed) and {c.metadata["language"] for c in mixed} == {"de"}
    asked.clear()
    unread = chunks()  # not read by load_documents: each chunk is detected
    assert len(asked) == len(unread) > 1


def test_codes_and_numbers_are_no_language() -> None:
    rng = random.Random(11)
    vocabulary = [f"{a}{n}" for a in ("sol", "grid", "cell", "volt", "peak") for n in range(60)]
    codes = " ".join(rng.choice(vocabulary) for _ in range(200))
    assert detect_language(codes) is None  # trigram models call this Estonian
    sentence = "Die Pumpe P-4 läuft nachts von 22 bis 6 Uhr und wird jede Woche geprüft."
    assert detect_language(sentence) == "de"  # a few codes and numbers in real text still count


# ---- what detection costs ------------------------------------------------------------------------

RARE = {
    "tr": "Batarya, güneş panellerinin gün içinde ürettiği enerjiyi depolar. Paneller gece hiçbir "
    "şey üretmediğinde, batarya şarjı yüzde ona düşene kadar evi besler. Güneşli bir günde tam "
    "şarj yaklaşık dört saat sürer. Bulutlu günlerde batarya daha yavaş şarj olur ve uygulama, "
    "dolana kadar ne kadar süre kaldığını gösterir.",
    "hu": "Az akkumulátor tárolja azt az energiát, amelyet a napelemek napközben termelnek. Amikor "
    "a napelemek éjszaka nem termelnek semmit, az akkumulátor látja el a házat, amíg a töltöttsége "
    "tíz százalékra nem csökken. A teljes feltöltés napos időben körülbelül négy órát vesz "
    "igénybe. Felhős napokon az akkumulátor lassabban töltődik.",
    "id": "Baterai menyimpan energi yang dihasilkan oleh panel surya pada siang hari. Ketika panel "
    "tidak menghasilkan apa pun pada malam hari, baterai memasok listrik ke rumah sampai daya "
    "baterai turun menjadi sepuluh persen. Pengisian penuh membutuhkan waktu sekitar empat jam "
    "pada hari yang cerah, dan aplikasi menunjukkan berapa lama lagi sampai baterai penuh.",
    "sw": "Betri huhifadhi nishati ambayo paneli za jua huzalisha wakati wa mchana. Paneli "
    "zisipozalisha chochote usiku, betri hutoa umeme kwa nyumba hadi chaji yake ishuke hadi "
    "asilimia kumi. Kuchaji kikamilifu huchukua takriban saa nne katika siku ya jua. Katika siku "
    "zenye mawingu betri huchaji polepole zaidi, na programu inaonyesha muda uliobaki.",
}


def test_rare_languages_in_plain_letters_or_not_are_found() -> None:
    for code, text in RARE.items():
        assert detect_language(text) == code, code


def test_plain_letters_without_function_words_are_settled_without_lingua(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import synth._language as language

    def no_models(*args: object) -> None:
        raise AssertionError("lingua was asked")

    rng = random.Random(3)
    vocabulary = sorted(set(words(TEXTS["en"])) - language.FUNCTION_WORDS["en"])
    salad = " ".join(rng.choice(vocabulary) for _ in range(120)).capitalize() + "."
    monkeypatch.setattr(language, "_check_detector", no_models)
    monkeypatch.setattr(language, "_document_detector", no_models)
    assert detect_language(salad) is None
    with pytest.raises(AssertionError, match="lingua was asked"):
        detect_language(TEXTS["en"])  # real English: its function words send it to the models


def test_a_document_whose_first_and_last_samples_agree_is_settled_by_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import synth._language as language

    asked: list[str] = []

    def detect(text: str) -> str | None:
        asked.append(text)
        return "de" if "ß" in text else "en"

    monkeypatch.setattr(language, "detect_language", detect)
    english = "x" * 10_000
    assert language.document_languages(english) == ["en"] and len(asked) == 2
    asked.clear()
    german_end = english[:-1000] + "ß" * 1000
    assert language.document_languages(german_end) == ["en", "de"]
    assert len(asked) == language.DOCUMENT_SAMPLES
    assert "ß" in asked[1] and "ß" not in asked[2]  # the last sample is read second


# ---- the command line ------------------------------------------------------------------------------


def test_generate_language_flag_writes_every_golden_in_it_and_wins_over_the_file(
    server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from synth.cli import main
    from synth.dataset import Dataset

    docs = write_corpus(tmp_path / "docs")
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(
        '[generation]\nlanguage = "fr"\n\n[contexts]\nchunk_size = 80\n',
        encoding="utf-8",
    )
    out = tmp_path / "goldens.jsonl"
    flags = ["--model", "openai:fake-model", "--base-url", server.url, "--embedder", "hash"]
    flags += ["--pipeline", str(pipeline), "--goldens", "4", "-o", str(out), "--quiet"]
    assert main(["generate", str(docs), *flags, "--language", "DE"]) == 0
    dataset = Dataset.load(out)
    assert len(dataset) == 4 and {g.metadata["language"] for g in dataset} == {"de"}
    assert all(check_language(g.input, "de").status == "match" for g in dataset)
    assert main(["generate", str(docs), *flags, "--language", "xx"]) != 0
    assert "--language" in capsys.readouterr().err


# ---- per-language prompt sets ----------------------------------------------------------------------

GERMAN_INPUTS = """Du schreibst Fragen zu Dokumenten, um ein KI-System zu prüfen.

Kontext:
$context
$language
Schreibe $count verschiedene Fragen, die sich allein aus dem Kontext beantworten lassen.
Antworte mit genau einem JSON-Objekt: {"inputs": ["erste Frage", "zweite Frage"]}
"""


def _context_language(prompt: str) -> str | None:
    import re

    found = re.search(r"<context>(.*?)</context>", prompt, re.DOTALL)
    return detect_language(re.sub(r"<[^>]+>", " ", found.group(1))) if found else None


def test_a_language_prompt_set_writes_the_prompts_of_that_languages_goldens(
    server, tmp_path: Path
) -> None:
    from synth.cli import main
    from synth.dataset import Dataset

    docs = write_corpus(tmp_path / "docs")
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(
        f'[contexts]\nchunk_size = 80\n\n[prompts.de]\ninputs = """{GERMAN_INPUTS}"""\n',
        encoding="utf-8",
    )
    out = tmp_path / "goldens.jsonl"
    flags = ["--model", "openai:fake-model", "--base-url", server.url, "--embedder", "hash"]
    flags += ["--pipeline", str(pipeline), "--goldens", str(GOLDENS), "-o", str(out), "--quiet"]
    assert main(["generate", str(docs), *flags]) == 0
    dataset = Dataset.load(out)
    assert len(dataset) == GOLDENS and "de" in {g.metadata["language"] for g in dataset}
    asked = [r.prompt for r in server.requests_to("chat")]
    german = [p for p in asked if "Du schreibst Fragen" in p]
    english = [p for p in asked if "You write questions" in p]
    assert german and english
    assert {_context_language(p) for p in german} == {"de"}
    assert "de" not in {_context_language(p) for p in english}
    assert all("Language: write every input in German." in p for p in german)


def test_a_language_prompt_set_is_checked_and_counted_in_the_version() -> None:
    from synth.errors import ConfigError
    from synth.run.config import pipeline_from_dict
    from synth.stage.templates import PromptSet

    german = PromptSet({"DE": {"inputs": GERMAN_INPUTS}})
    assert german.languages == {"de"} and german.version != PromptSet().version
    assert german.for_language("de").text("inputs") == GERMAN_INPUTS
    assert german.for_language("fr") is german and german.text("inputs") != GERMAN_INPUTS
    assert german.for_language("de").version == german.version
    with pytest.raises(ConfigError, match="prompt set 'xx'"):
        pipeline_from_dict({"prompts": {"xx": {"inputs": GERMAN_INPUTS}}})
    with pytest.raises(ConfigError, match=r"\[prompts\].*prompt set 'de'.*\$context"):
        pipeline_from_dict({"prompts": {"de": {"inputs": "Schreibe $count Fragen."}}})


# ---- conversations -----------------------------------------------------------------------------------

GERMAN_TURN = "Wie lange dauert die Garantie für die Batterie, und was muss man dafür tun?"
SAMPLE_DOCS = Path(__file__).resolve().parent.parent / "sample_docs"


def _share(key: str) -> float:
    import hashlib

    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) / 2**32


def _wrong_30_percent(request: dict) -> str:
    """The fake's replies, with 30% of the conversations' user turns written in German (and 30%
    of the re-asks of a turn in the wrong language too). An assistant turn in German would be
    dropped as ungrounded first: its quotes, from the English context, do not support it."""
    text = synth_replies.reply(request)
    fmt = request.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name")
    if name == "ConversationReply":
        data = json.loads(text)
        for conversation in data["conversations"]:
            for number, exchange in enumerate(conversation["exchanges"]):
                if _share(f"{number}:{exchange['user']}") < 0.3:
                    exchange["user"] = GERMAN_TURN
        return json.dumps(data)
    prompt = request["messages"][-1]["content"]
    if name == "LanguageReply" and _share("again:" + prompt) < 0.3:
        return json.dumps({"input": GERMAN_TURN})
    return text


def test_conversations_wrong_30_percent_of_the_time_still_give_n_in_the_right_language(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from synth.data import ConversationalGolden

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-languages")
    with FakeOpenAI(reply=_wrong_30_percent) as fake:
        synth = Synthesizer(
            "openai:fake-model",
            base_url=fake.url,
            embedder="hash",
            cache=None,
            run_dir=tmp_path / "run",
            store_path=tmp_path / "store",
        )
        with synth:
            dataset = synth.generate_conversational_goldens_from_docs(SAMPLE_DOCS, num_goldens=12)
        asked = [r.prompt for r in fake.requests_to("chat")]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert len(dataset) == 12
    rewritten = 0
    for golden in dataset:
        assert isinstance(golden, ConversationalGolden) and golden.metadata["language"] == "en"
        for turn in golden.turns:
            assert not check_language(turn.content, "en").mismatch, turn.content
            rewritten += "language_rewritten" in turn.metadata
    print([(r["reason"], r.get("detail", "")[:80]) for r in _rejects(tmp_path)])
    assert rewritten, "a turn asked again and then right is kept, rewritten"
    line = "Language: write every turn (the user's and the assistant's) in English."
    assert any(line in p for p in asked)
    assert any(WRONG_PROMPT in p and GERMAN_TURN in p for p in asked)
    dropped = _dropped(manifest, "wrong_language")
    assert dropped > 0
    rejected = [r for r in _rejects(tmp_path) if r["reason"] == "wrong_language"]
    assert len(rejected) >= dropped  # and the drops of spares started but not used (not counted)
    assert all("after it was asked again" in r["detail"] for r in rejected)
