"""Every figure the workshop draws, with matplotlib's Agg backend (no screen needed).

`toy` draws Modules 1-2's figures; `real` draws Module 3's when its results are present;
`background` draws some toy figures in a second process while the first one works.
"""

TOY_FIGURES = ("bank_split", "weights_heatmaps", "bank_three_lives", "pipeline", "scaling")


def draw_all(results, out, skip=()):  # dict, Path, names -> list[Path]
    """Draw every figure whose results are present (except toy ones in `skip`) into `out`."""
    from attention_workshop.figures import toy

    paths = toy.draw_all(results, out, [name for name in TOY_FIGURES if name not in skip])
    if "m3" in results:
        from attention_workshop.figures import real

        paths += real.draw_all(results["m3"], out)
    return paths
