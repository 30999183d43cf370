"""Every figure the workshop draws, with matplotlib's Agg backend (no screen needed).

`toy` draws Modules 1-2's figures; `real` draws Module 3's when its results are present.
"""


def draw_all(results, out):  # dict, Path -> list[Path]
    """Draw every figure whose results are present into folder `out`; return the paths."""
    from attention_workshop.figures import toy

    paths = toy.draw_all(results, out)
    if "m3" in results:
        from attention_workshop.figures import real

        paths += real.draw_all(results["m3"], out)
    return paths
