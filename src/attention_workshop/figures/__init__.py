"""Every figure the workshop draws, with matplotlib's Agg backend (no screen needed).

`toy` draws Modules 1-2's figures, `real` Module 3's when its results are present;
`parallel` shares the drawing between two processes.
"""


def draw_all(results, out):  # dict, Path -> list[Path]
    """Draw every figure whose results are present into folder `out`; return the paths."""
    from attention_workshop.figures import parallel, toy

    jobs = toy.jobs(results, out)
    if "m3" in results:
        from attention_workshop.figures import real

        jobs += real.jobs(results["m3"], out)
    return parallel.draw_jobs(jobs)
