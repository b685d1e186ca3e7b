#!/usr/bin/env python3
"""Writes results/transfer_prior/transfer_prior.md from results/transfer_prior/transfer_prior.json (the output of
`cutune score --spaces ... --prior-from ... --json`): the scores with and without the prior,
per space, and the reading. Run from the repository root after that command."""
import json


def main():
    d=json.load(open('results/transfer_prior/transfer_prior.json'))
    rows={r['strategy']:r for r in d['strategies']}
    pm=d['prior_minus_without']
    bp=[r for r in pm if r['strategy']=='bandit_portfolio'][0]
    hurt=sorted(((v,k) for k,v in bp['per_space'].items() if v< -0.01))
    ab=[bp['per_space'][n] for n in ('convolution_A100','convolution_A4000','dedispersion_A100','dedispersion_A4000')]
    L=["# Transfer across GPUs and problem sizes: a prior from the same kernel measured elsewhere (leave one out)","",
    "Each recorded space is tuned (simulated) with a prior built from the recordings of the same",
    "kernel on the *other* GPUs and problem sizes (`search::leave_one_out_priors`: same kernel name and",
    "parameter names, another GPU or problem; those at the space's own problem size are preferred,",
    "other sizes are used only when there is none: `search::SpacePrior`), and without; the",
    f"same seeds both ways, scored by the FGCS 2024 methodology (`cutune score --prior-from`, 1 evaluator,",
    f"window T(0.5)..T(0.96), isotonic S(t)), {d['repeats']} runs per strategy and space, {d['date'][:10]}. With a",
    "prior every strategy first proposes the prior's 8 best configurations (`kPriorSeeds`, each",
    "source's best in turn), and `bandit_portfolio` has one more arm: a local search around the best",
    "found here that tries first the neighbour the prior ranks best. The 19 spaces are the 4 shared",
    "ones (A100 and A4000) and the 15 of `results/spaces/` (H100 and H200; reduction, scan and matmul",
    "also at a second size).","",
    "Command (its output lists the sources of each space's prior):","","```sh",
    'S="../shared/data/spaces/{convolution,dedispersion}_{A100,A4000}.json.gz results/spaces/*.json.gz"',
    "cutune score --spaces $S --prior-from $S --strategies bandit_portfolio,tabu_greywolf,greedy_ils,random \\",
    f"  --repeats {d['repeats']} --json results/transfer_prior/transfer_prior.json","```","",
    "## Scores (with the prior / without, the same seeds)","",
    "| strategy | with prior | without | difference | spaces helped / hurt (by more than 0.01) |","| --- | ---: | ---: | ---: | --- |"]
    for r in pm:
        ps=r['per_space']; up=sum(1 for v in ps.values() if v>0.01); dn=sum(1 for v in ps.values() if v<-0.01)
        L.append(f"| {r['strategy']} | {r['with']:.3f} | {r['without']:.3f} | **{r['difference']:+.3f}** | {up} / {dn} |")
    L+=["","Per space, with the prior minus without:","","| space | prior from | "+" | ".join(r['strategy'] for r in pm)+" |",
        "| --- | --- | "+" | ".join("---:" for _ in pm)+" |"]
    for s in d['spaces']:
        src="; ".join(f"{u['device']} {u['problem']}" for u in s['prior'] if u.get('used'))
        L.append(f"| {s['name']} | {src} | "+" | ".join(f"{r['per_space'][s['name']]:+.3f}" for r in pm)+" |")
    L+=["","## Reading","",
    f"- Over the 19 spaces the prior raises the default strategy from {bp['without']:.3f} to {bp['with']:.3f} ({bp['difference']:+.3f}).",
    "  `kPriorByDefault` stays **on**: `cutune tune` uses a matching prior from its DB unless",
    "  `--prior none`. (Scores of one strategy differ between tables with other run counts: the",
    "  isotonic curve of the pooled runs depends on their number; compare rows of one table only.)",
    "- Between an H100 and an H200 (same architecture, same SM count) the best configurations",
    "  coincide: with the other GPU's prior every strategy scores about 1.0 on nbody, matmul 2048,",
    f"  scan, transpose. Between an A100 and an A4000 the default gains {sum(ab)/4:+.2f} on average over their",
    f"  4 spaces ({min(ab):+.3f} to {max(ab):+.3f}): their best configurations rank in the tens on each other's space.",
    "- Where it hurts the default: " + ", ".join(f"{k} ({v:+.2f})" for v,k in hurt) + ".",
    "  matmul at 1024^3 has only priors from 2048^3: their best configurations are not the best at",
    "  1024^3, and in a window of 174 evaluations the 8 seeds and the prior's arm cost more than they",
    "  find. Before sources at the space's own size were preferred, the reduction at 2^28 on the H200",
    "  (prior: the H100 at 2^28 averaged with the H200 at 2^22) lost 0.31 too (100 runs, the run of",
    "  commit 184f60c of results/transfer_prior/transfer_prior.json); it now gains.",
    "- The H100/H200 pairs make the mean look better than a new GPU generation would; the A100/A4000",
    "  figure is the more telling one, and still only two GPUs of one vendor."]
    open('results/transfer_prior/transfer_prior.md','w').write("\n".join(L)+"\n")


if __name__ == "__main__":
    main()
