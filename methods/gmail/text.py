"""The prose of the reproduction page: what was shrunk, and the Reading."""

from __future__ import annotations


def shrunk(o: dict, info: dict) -> str:
    return "\n".join([
        "- **Data**: COCO/CC3M/CC12M and Stable Diffusion v2 are not available offline. Real images are the substrate's "
        f"procedural 32×32 renders ({o['n_train']} training pairs, {o['n_test']} held-out pairs); generated images come "
        f"from the **'{o['generator']}' generator** = the spec §5 artifact renderer (the caption re-rendered as a new scene, "
        "plus colour cast, 2-px checkerboard, blur and texture noise at the given strength). Every number on this page "
        "was produced with that generator; the rectified-flow model of `methods/rf_solver` was not used (see Reading).",
        f"- **Backbone**: {info['backbone']} ({info['arch']}), trained contrastively on the real renders (it is f_r and h); "
        "f_g is its LoRA copy (rank 4 on q/k/v/out of every vision layer) + Proj for Gen.",
        f"- **Stage 1**: {o['stage1_steps']} steps (paper 50k), batch {o['batch_size']}, AdamW wd 0.01, cosine with "
        f"{o['restarts']} warm restarts, clip 1, **lr {o['lr']:g}** (paper 1e-4, raised because of the ~150× fewer steps), "
        f"τ = 0.07, μ = {o['mu']} (weight not given in the paper).",
        f"- **Stage 2**: CLIP-loss tuning of text-encoder LoRA (rank 4) + both projections, {o['stage2_steps']} steps per "
        "arm; LLaVA/LLaMA-3 are out of reach — the captioning demo is a ClipCap-style prefix MLP + GRU decoder trained "
        f"from scratch ({o['caption_steps']} steps) in place of GPT-2, scored with our own corpus BLEU-4.",
        f"- **Evaluation**: retrieval over {o['n_test']} real test renders with their most specific caption (equal "
        "captions count as hits), zero-shot shape/colour/background/count classification, BLEU-4 against each "
        f"scene's attribute captions; {o['seeds']} seeds per strength.",
    ])  # fmt: skip


def reading(strengths: list[float], aggs: list[dict], checks: list) -> str:
    top, low = aggs[-1], aggs[0]
    g, n, ro = top["gmail"], top["naive"], top["real-only"]
    fails = [c for c, ok, _ in checks if not ok]
    d = top["dual-noalign"]
    if g["paired_cosine"][0] > d["paired_cosine"][0]:
        who = "L_align adds to what a separate encoder trained on captions alone gives"
    else:
        who = ("a separate encoder trained on captions alone (no L_align) closes the cosine gap as much or more, "
               "so on this measure the gain is not specific to L_align")  # fmt: skip
    parts = [
        f"At the strongest artifacts ({strengths[-1]}) stage 1 moves the generated embeddings toward their real twins: "
        f"paired cosine {n['paired_cosine'][0]:.2f} without alignment → {g['paired_cosine'][0]:.2f} with GMAIL "
        f"(paper 0.52 → 0.89) and {d['paired_cosine'][0]:.2f} for the dual encoder without L_align — {who}. "
        f"A linear probe still tells real from generated embeddings in all 64 dimensions ({n['separability'][0]:.0f}% "
        f"without alignment, {g['separability'][0]:.0f}% with GMAIL; chance 50%): the clouds come closer but a "
        "systematic offset remains; on the plotted PCA plane the probe reads "
        f"{n['plane_separability'][0]:.0f}% → {g['plane_separability'][0]:.0f}%.",
        f"Downstream on real images, real-image R@1 (mean of both directions) is {n['r@1'][0]:.1f} ± {n['r@1'][1]:.1f}% "
        f"for naive mixing and {g['r@1'][0]:.1f} ± {g['r@1'][1]:.1f}% for GMAIL ({d['r@1'][0]:.1f} ± {d['r@1'][1]:.1f}% "
        f"without L_align), against {ro['r@1'][0]:.1f}% when stage 2 sees the real renders and "
        f"{top['zero-shot']['r@1'][0]:.1f}% with no stage 2."
        + (
            " Training the text side on artifact images through f_r drags the shared space toward the artifacts; "
            "routing generated images through their own encoder avoids most of that."
            if g["r@1"][0] - g["r@1"][1] > n["r@1"][0] + n["r@1"][1]
            else " The difference between naive mixing and GMAIL is not larger than the seeds' spread here."
        ),
    ]
    if len(strengths) > 1:
        parts.append(
            f"From strength {strengths[0]} to {strengths[-1]} naive R@1 goes {low['naive']['r@1'][0]:.1f} → "
            f"{n['r@1'][0]:.1f}% and GMAIL {low['gmail']['r@1'][0]:.1f} → {g['r@1'][0]:.1f}%."
        )
    if "bleu4" in g:
        parts.append(
            f"Captioning BLEU-4: naive {n['bleu4'][0]:.1f}, no-L_align {top['dual-noalign']['bleu4'][0]:.1f}, GMAIL "
            f"{g['bleu4'][0]:.1f}, real-only {ro['bleu4'][0]:.1f}, a constant caption {top['constant']['bleu4'][0]:.1f}."
        )
    parts.append("Checks that fail: " + "; ".join(fails) + "." if fails else "Every §7 check passes on the seed means.")
    parts.append(
        "What holds is only what this toy world can show: a systematic, learnable artifact signature that a frozen "
        "encoder embeds off the real manifold, and a LoRA copy that can be pulled back onto it. Differences smaller "
        "than the seed std in the tables are not evidence either way. What would change the conclusion: a real "
        "generator whose errors are semantic (wrong objects, counts) rather than a fixed pixel signature — L_align "
        "then has to learn a many-to-one map, not undo a filter; a stronger backbone whose real path already "
        "ignores the artifacts (no gap to close); or more seeds where the arms are within one std. The preferred "
        "rectified-flow generator (methods/rf_solver conditioned on caption attributes) was not trained here for "
        "lack of CPU time; it is the next experiment."
    )
    return "\n\n".join(parts)
