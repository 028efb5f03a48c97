"""Prompt templates (constants only), written for this project with the structure of spec §3.2.

Placeholders are filled with ``str.format``; the record is always the part that
gets cut when a prompt is too long, never the instructions.
"""

SYSTEM = (
    "You are a professional fact-checker. Your mission is to verify the Claim. Follow the instructions "
    "exactly and be brief. The Record documents the fact-check so far."
)

PLAN = """# Instructions
What you know so far is not enough to judge the Claim. Decide which actions to take next.
- Propose as few actions as possible, but as many as needed.
- Use only the valid actions listed below, written exactly in their format.
- Never repeat an action from the Record, and do not propose near-copies of earlier ones.
- Put all actions in ONE Markdown code block at the very end of your answer, one action per line.
{extra_rules}
# Valid actions
{actions}

# Examples
{examples}

# Record
{record}

# Your Actions
"""

PLAN_RETRY = """
# Rejected
These proposed actions were rejected: {reasons}.
Every search query must be about the Claim above (use its names, places, numbers); never copy an example.

# Your Actions
"""

ACTION_ENTRY = "- `{name}`: {description} How to use: {how_to} Format: `{format}`"

EXAMPLE_ENTRY = """Claim: "{claim}"
Reasoning: {reasoning}
```
{action}
```"""

_source_block = """# Record
{record}

# Search result
Source: {url}
Title: {title}
Date: {date}
{text}

# Your summary
Summary:"""

SUMMARIZE_SOURCE = (
    """# Instructions
Below is a search result. Summarize only what in it matters for fact-checking the Claim in the Record.
- Keep every relevant image reference exactly as written, like <image:3>.
- Say when the source was published and who published it, if the result tells.
- Leave out ads and anything off-topic.
- If nothing in the result helps the fact-check, answer exactly: NONE

# Examples
Summary: The article (Reuters, March 3, 2021) reports that the bridge opened in 1932, not 1952.
Summary: NONE
Summary: A government table lists 576,851 residents in 2020, matching the Claim's number.

"""
    + _source_block
)

#: ``summary_prompt="lenient"``: the same NONE rule, worded for small local models. Under
#: SUMMARIZE_SOURCE, Qwen2.5-Coder-1.5B answered ``NONE`` to 22 of 24 sources that were the claim's own gold
#: evidence; asked for what bears on the Claim's people, places, events, dates or numbers, with ``NONE``
#: only for a result entirely about something else (and the NONE example last), it kept 12 of 12
#: (docs/results/defame.md). A source is still relevant iff its summary does not contain ``NONE``.
SUMMARIZE_SOURCE_LENIENT = (
    """# Instructions
Below is a search result found while fact-checking the Claim in the Record. Write one to three sentences \
with what the result says that bears on the Claim: its people, places, events, dates or numbers, for or \
against it.
- Keep every relevant image reference exactly as written, like <image:3>.
- Say when the source was published and who published it, if the result tells.
- Only if the result is entirely about something else, answer exactly: NONE

# Examples
Summary: The article (Reuters, March 3, 2021) reports that the bridge opened in 1932, not 1952.
Summary: A government table lists 576,851 residents in 2020, matching the Claim's number.
Summary: NONE

"""
    + _source_block
)

MERGE_SUMMARIES = """# Instructions
Merge the source summaries below into one or two short paragraphs about the Claim.
- Keep every URL as a Markdown link, like [Source](https://example.org/page).
- Keep every relevant image reference, like <image:2>.

# Claim
{claim}

# Summaries
{summaries}

# Merged summary
"""

DEVELOP = """# Instructions
Analyse the Claim in light of the evidence in the Record. Write one to three short paragraphs of new, \
step-by-step reasoning.
- Do not restate the Claim.
- Say which information is still missing.
- Cite web sources as Markdown links.
- Use only the evidence in the Record plus common sense.

# Record
{record}

# Your analysis
"""

JUDGE = """# Instructions
Decide which option below fits the Claim best, given the Record.
1. In at most one paragraph, summarise the key insights of the fact-check.
2. In one paragraph, say which option fits best and end it with that option in backticks, like `this`.
{extra_rules}
# Decision options
{options}

# Record
{record}

# Your judgement
"""

#: ``verdict="likelihood"|"calibrated"``: the same decision asked for the option alone; each option's
#: likelihood as the reply (`` `label` ``) is read off the model instead of a generated answer.
JUDGE_SCORED = """# Instructions
Decide which option below fits the Claim best, given the Record. Answer with that option only, in backticks, like `this`.
{extra_rules}
# Decision options
{options}

# Record
{record}

# Your judgement
"""

JUDGE_REMINDER = "\n(Do not forget to choose one option from Decision Options and enclose it in backticks like `this`)"

JUSTIFY = """# Instructions
Write ONE short paragraph that justifies the verdict below.
- Use only information from the Record.
- Link the key sources in Markdown, like [Source](https://example.org).
- Do not restate the Claim.

# Record
{record}

# Verdict
{verdict}

# Justification
"""

BASELINE = """# Instructions
Decide which option below fits the Claim best, using only what you already know (no evidence is given).
End your answer with the chosen option in backticks, like `this`.
{extra_rules}
# Decision options
{options}

# Claim
{claim}

# Your judgement
"""

BASELINE_SCORED = """# Instructions
Decide which option below fits the Claim best, using only what you already know (no evidence is given).
Answer with that option only, in backticks, like `this`.
{extra_rules}
# Decision options
{options}

# Claim
{claim}

# Your judgement
"""

#: Content-free inputs for calibration (Zhao et al., 2021, "Calibrate Before Use"): the record or claim
#: replaced by each of these; their option probabilities, averaged, estimate the prompt's own bias.
CONTENT_FREE = ("N/A", "[MASK]", "")

DEFAULT_EXAMPLES: dict[str, tuple[str, str, str]] = {
    # action name -> (claim, reasoning, action line)
    "web_search": (
        "The Golden Gate Bridge opened in 1952.",
        "The opening year must be checked against reports.",
        'web_search("Golden Gate Bridge opening year")',
    ),
    "image_search": (
        "A photo shows a flooded Times Square in 2012.",
        "Pictures of the event would show whether the flood happened there.",
        'image_search("Times Square flood 2012")',
    ),
    "reverse_search": (
        "<image:1> This photo shows the Sahara covered in snow in 2023.",
        "Where else the image appeared tells when it was taken.",
        "reverse_search(<image:1>)",
    ),
    "geolocate": (
        "<image:1> This picture was taken in Kenya.",
        "The place the image shows must be established.",
        "geolocate(<image:1>)",
    ),
    "ocr": ("<image:1> This sign announces a curfew in Paris.", "The sign's text has to be read.", "ocr(<image:1>)"),
    "detect_faces": (
        "<image:1> The president attended this protest.",
        "Whether people's faces are visible matters for identifying them.",
        "detect_faces(<image:1>)",
    ),
}
