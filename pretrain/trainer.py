"""The pretraining loop.

One optimiser step reads ``micro_rows * accum * world_size`` packed rows (the global
batch); each process runs its contiguous share in ``accum`` micro-batches. Loss
denominators cover the global batch (see ``objective``), so 1 process with
accumulation and N processes give the same update. A run directory holds ``run.json``
(the resolved configuration), ``last.pt`` (resumable checkpoint), ``best.pt`` (model
weights of the best dev bpc), ``metrics.jsonl`` and, at the end, ``export/`` (the
best step in the released format).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed.tensor

from . import objective as O
from .bundle import is_bundle
from .checkpoint import (
    atomic_torch_save,
    atomic_write_text,
    load_checkpoint,
    rng_state,
    seed_everything,
    set_rng_state,
)
from .config import RunConfig
from .data import TrainStream, build_dev_rows, resolve_paths
from .distributed import (
    DistInfo,
    all_reduce_sum,
    full_state,
    init_distributed,
    is_fsdp,
    load_full_state,
    no_sync,
    shutdown_distributed,
    wrap_model,
)
from .model import build_model, count_parameters, matrix_parameter_names, param_groups
from .planes import PlaneStream, batch_denominators, dev_rows_from_planes, read_plane_corpus
from .sampling import IGNORE, make_sampler

log = logging.getLogger("pretrain")


class SimulatedCrash(RuntimeError):
    """Raised by the ``train.fail_at_step`` testing hook."""


@dataclass
class TrainResult:
    """Summary of a finished (or interrupted) run."""

    step: int
    best_dev_bpc: float
    best_step: int
    history: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = True  # False when a call budget stopped the run before its end

    def losses(self) -> list[float]:
        return [h["loss"] for h in self.history if "loss" in h]


def _autocast(device: torch.device, bf16: bool) -> contextlib.AbstractContextManager[Any]:
    if device.type == "cuda" and bf16:
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _forward(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> Any:
    return model(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])


class Trainer:
    """Builds everything a run needs and runs it; ``run()`` resumes from ``last.pt``."""

    def __init__(
        self,
        cfg: RunConfig,
        data: str | Sequence[str | Path],
        out_dir: str | Path,
        *,
        resume: bool = True,
        encoder: Any = None,
        info: DistInfo | None = None,
    ) -> None:
        self.cfg = cfg
        self.out = Path(out_dir)
        self.resume = resume
        t = cfg.train
        if t.threads > 0:
            torch.set_num_threads(t.threads)
        self.info = info or init_distributed(t.device)
        self.device = self.info.device
        seed_everything(t.seed)  # CPU runs are then reproducible (and resumable) bit for bit

        self.model_config = cfg.model_config()
        raw = build_model(self.model_config).to(self.device)
        raw.autocast_gpu = t.bf16  # the encoder's own CUDA autocast follows train.bf16
        self.n_params = count_parameters(raw)
        matrices = matrix_parameter_names(raw)
        self.model = wrap_model(raw, self.info, t.dist)
        self.raw_model = raw
        self.forward_model: torch.nn.Module = torch.compile(self.model) if t.compile else self.model  # type: ignore[assignment]
        fused = self.device.type == "cuda"
        self.optimizer = torch.optim.AdamW(
            param_groups(self.model, matrices, t.weight_decay),
            lr=t.lr,
            betas=t.betas,
            eps=t.eps,
            **({"fused": True} if fused else {}),
        )
        from .schedule import Schedule

        self.schedule = Schedule(t, cfg.data)
        sampler = make_sampler(cfg.data.sampler)
        self.stream: TrainStream | PlaneStream
        if isinstance(data, str | Path) and is_bundle(data):
            # pre-encoded planes: batches are corrupted and packed on the training device
            pre = Path(data) / "pretrain"
            self.stream = PlaneStream(read_plane_corpus(pre, "train"), cfg.data, seed=t.seed, device=self.device)
            dev = read_plane_corpus(pre, "dev")
            self.dev_rows = dev_rows_from_planes(dev, cfg.data, sampler, seed=t.seed) if cfg.data.dev_fraction > 0 else []
        else:
            paths = resolve_paths(data)
            self.stream = TrainStream(paths, cfg.data, sampler, seed=t.seed, encoder=encoder)
            self.dev_rows = build_dev_rows(paths, cfg.data, sampler, seed=t.seed, encoder=encoder)
        self.step = 0
        self.train_seconds = 0.0
        self.history: list[dict[str, Any]] = []
        #: called after every step (after its dev evaluation and log entry) with the trainer and
        #: the entry; returning True checkpoints and stops the run like ``call_budget_s``
        #: (``pretrain.gpu`` writes its snapshots to ``$OUT`` from here)
        self.after_step: Callable[[Trainer, dict[str, Any]], bool] | None = None

    # -- evaluation ----------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self) -> float:
        """Masked bits per character on the fixed dev slice (NaN without a dev slice)."""
        if not self.dev_rows:
            return math.nan
        self.model.eval()
        # equal shares on every rank (sharded forwards are collective): pad with a copy
        # of a row whose letter targets are all ignored
        per = -(-len(self.dev_rows) // self.info.world_size)
        mine = self.dev_rows[self.info.rank * per : (self.info.rank + 1) * per]
        filler = dict(self.dev_rows[0], char_target=np.full_like(self.dev_rows[0]["char_target"], IGNORE))
        mine = mine + [filler] * (per - len(mine))
        sums = torch.zeros(2, dtype=torch.float64)
        size = self.cfg.train.micro_rows
        for i in range(0, len(mine), size):
            batch = O.collate(mine[i : i + size], self.device)
            with _autocast(self.device, self.cfg.train.bf16):
                out = _forward(self.forward_model, batch)
            ce, n = O.masked_ce_sum(out, batch)
            sums += torch.tensor([ce, n], dtype=torch.float64)
        sums = all_reduce_sum(sums.to(self.device), self.info).cpu()
        self.model.train()
        return O.bits_per_char(float(sums[0]), int(sums[1]))

    # -- checkpoints ---------------------------------------------------------------
    def save_checkpoint(self) -> None:
        msd, osd = full_state(self.model, self.optimizer)
        if not self.info.is_main:
            return
        atomic_torch_save(
            {
                "step": self.step,
                "model": msd,
                "optimizer": osd,
                "schedule": self.schedule.state_dict(),
                "data": self.stream.state_dict(),
                "rng": rng_state(),
                "history": self.history,
                "model_config": self.model_config.to_dict(),
                "run_config": self.cfg.to_dict(),
                "train_seconds": self.train_seconds,
            },
            self.out / "last.pt",
        )

    def save_resume(self, path: Path) -> None:
        """Weights (bf16) and loop state without the optimiser: what a chain step sends back
        so that a lost machine can be replaced (``resume.pt``, see ``load_resume``)."""
        msd, _ = full_state(self.model, self.optimizer)
        if not self.info.is_main:
            return
        atomic_torch_save(
            {
                "step": self.step,
                "model": {k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in msd.items()},
                "schedule": self.schedule.state_dict(),
                "data": self.stream.state_dict(),
                "history": self.history,
                "model_config": self.model_config.to_dict(),
                "train_seconds": self.train_seconds,
            },
            path,
        )

    def load_resume(self, path: Path) -> None:
        """Continue from a ``resume.pt``: weights and loop state, a fresh optimiser."""
        state = load_checkpoint(path)
        weights = {k: v.float() if v.is_floating_point() else v for k, v in state["model"].items()}
        self.raw_model.load_state_dict(weights)
        self.schedule.load_state_dict(state["schedule"])
        self.stream.load_state_dict(state["data"])
        self.step = int(state["step"])
        self.history = list(state["history"])
        self.train_seconds = float(state.get("train_seconds", 0.0))

    def save_best(self, bpc: float) -> None:
        msd, _ = full_state(self.model, self.optimizer) if is_fsdp(self.model) else (None, None)
        if not self.info.is_main:
            return
        if msd is None:
            msd = {k: v.detach().cpu().clone() for k, v in self.raw_model.state_dict().items()}
        atomic_torch_save(
            {"step": self.step, "dev_bpc": bpc, "model": msd, "model_config": self.model_config.to_dict()},
            self.out / "best.pt",
        )

    def load_checkpoint(self, path: Path) -> None:
        state = load_checkpoint(path)
        load_full_state(self.model, self.optimizer, state["model"], state["optimizer"])
        self.schedule.load_state_dict(state["schedule"])
        self.stream.load_state_dict(state["data"])
        set_rng_state(state["rng"])
        self.step = int(state["step"])
        self.history = list(state["history"])
        self.train_seconds = float(state.get("train_seconds", 0.0))

    # -- the loop ------------------------------------------------------------------
    def _log(self, entry: dict[str, Any]) -> None:
        self.history.append(entry)
        if self.info.is_main:
            with open(self.out / "metrics.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")

    def train_step(self) -> dict[str, Any]:
        """One optimiser step over the global batch; returns its log entry."""
        t = self.cfg.train
        info = self.info
        self.stream.set_tier_weights(self.schedule.tier_weights(self.step))
        share = t.micro_rows * t.accum
        n_rows = self.cfg.global_rows(info.world_size)
        if isinstance(self.stream, PlaneStream):
            full = self.stream.next_batch(n_rows)
            dens = batch_denominators(full)
            letters = n_rows * self.cfg.data.row_len
            mine_t = {k: v[info.rank * share : (info.rank + 1) * share] for k, v in full.items()}

            def micro(k: int) -> dict[str, torch.Tensor]:
                return {name: v[k * t.micro_rows : (k + 1) * t.micro_rows] for name, v in mine_t.items()}
        else:
            rows = self.stream.next_rows(n_rows)
            dens = O.denominators(rows)
            letters = int(sum(int((r["seg_id"] > 0).sum()) for r in rows))
            mine = rows[info.rank * share : (info.rank + 1) * share]

            def micro(k: int) -> dict[str, torch.Tensor]:
                return O.collate(mine[k * t.micro_rows : (k + 1) * t.micro_rows], self.device)
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for k in range(t.accum):
            batch = micro(k)
            last = k == t.accum - 1
            sync = no_sync(self.model, last or not info.enabled)
            with sync:
                with _autocast(self.device, t.bf16):
                    out = _forward(self.forward_model, batch)
                loss = O.combine(O.numerators(out, batch), dens, t.aux_weight)
                (loss * info.world_size).backward()
            total += loss.detach().double()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), t.clip)
        if isinstance(grad_norm, torch.distributed.tensor.DTensor):
            grad_norm = grad_norm.full_tensor()
        lr = t.lr * self.schedule.lr_factor(self.step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        total = all_reduce_sum(total, info).cpu()
        return {
            "step": self.step,
            "loss": float(total),
            "lr": lr,
            "grad_norm": float(grad_norm),
            "letters": letters,
        }

    def run(self) -> TrainResult:
        """Train until the schedule ends (or ``max_steps``), resuming when possible."""
        t = self.cfg.train
        if self.info.is_main:
            self.out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.cfg.to_json() + "\n", self.out / "run.json")
        last = self.out / "last.pt"
        returned = self.out / "resume.pt"
        if self.resume and (last.is_file() or returned.is_file()):
            if last.is_file():
                self.load_checkpoint(last)
            else:  # the machine was lost: continue from the weights that came back
                self.load_resume(returned)
            log.info("resumed from %s at step %d", last if last.is_file() else returned, self.step)
            if self.info.is_main:
                atomic_write_text("".join(json.dumps(h) + "\n" for h in self.history), self.out / "metrics.jsonl")
        elif self.info.is_main and (self.out / "metrics.jsonl").exists():
            (self.out / "metrics.jsonl").unlink()
        if self.info.is_main:
            log.info(
                "model %s: %.1fM parameters; %d dev rows; %d process(es) on %s",
                self.cfg.preset, self.n_params / 1e6, len(self.dev_rows), self.info.world_size, self.device,
            )
        self.model.train()
        window_letters, window_t0 = 0, time.perf_counter()
        call_t0 = tick = time.perf_counter()
        first_step = self.step
        calib_t0: float | None = None
        last_bpc = math.nan
        finished = True
        while self.step < min(self.schedule.end_step, self.schedule.max_steps):
            entry = self.train_step()
            now = time.perf_counter()
            self.train_seconds += now - tick
            tick = now
            if self.step == first_step + 2:  # after compilation and warm-up
                calib_t0 = now
            if t.time_budget_s > 0 and not self.schedule.calibrated and self.step == first_step + 2 + t.calibrate_steps:
                self._calibrate((now - (calib_t0 or call_t0)) / t.calibrate_steps)
                tick = time.perf_counter()
            window_letters += entry["letters"]
            if self.step % t.eval_every == 0 or self.step >= min(self.schedule.end_step, self.schedule.max_steps):
                last_bpc = self.evaluate()
                entry["dev_bpc"] = last_bpc
                if not math.isnan(last_bpc) and self.schedule.report_dev(self.step, last_bpc):
                    self.save_best(last_bpc)
            self._log(entry)
            if self.info.is_main and (self.step % t.log_every == 0 or "dev_bpc" in entry):
                elapsed = max(time.perf_counter() - window_t0, 1e-9)
                log.info(
                    "step %d/%d loss %.4f lr %.2e dev_bpc %.4f letters/s %.0f",
                    self.step, self.schedule.end_step, entry["loss"], entry["lr"], last_bpc,
                    window_letters / elapsed,
                )
                window_letters, window_t0 = 0, time.perf_counter()
            done = self.step >= min(self.schedule.end_step, self.schedule.max_steps)
            out_of_time = t.call_budget_s > 0 and time.perf_counter() - call_t0 >= t.call_budget_s and not done
            stopped = self.after_step is not None and self.after_step(self, entry) and not done
            out_of_time = out_of_time or stopped
            if self.step % t.ckpt_every == 0 or done or out_of_time:
                self.save_checkpoint()
            self.train_seconds += time.perf_counter() - tick
            tick = time.perf_counter()
            if t.fail_at_step == self.step:
                raise SimulatedCrash(f"simulated crash after step {self.step}")
            if out_of_time:
                if stopped:
                    log.info("stopped by the caller at step %d: checkpointed", self.step)
                else:
                    log.info("call budget of %.0f s spent at step %d: checkpointed, stopping", t.call_budget_s, self.step)
                finished = False
                break
        if not finished:
            return TrainResult(self.step, self.schedule.best, self.schedule.best_step, self.history, finished=False)
        if self.info.is_main:
            from .export import export_run

            try:
                export_run(self.out, self.out / "export")
            except Exception as exc:  # export is a convenience here; the checkpoints are kept
                log.warning("export of the best step failed: %s", exc)
        return TrainResult(self.step, self.schedule.best, self.schedule.best_step, self.history)

    def _calibrate(self, step_s: float) -> None:
        """Turn ``train.time_budget_s`` into a number of steps: measured seconds per step
        plus the cost of one dev evaluation spread over ``eval_every`` steps."""
        t = self.cfg.train
        t0 = time.perf_counter()
        self.evaluate()
        eval_s = time.perf_counter() - t0
        per_step = step_s + eval_s / max(t.eval_every, 1)
        left = max(t.time_budget_s - self.train_seconds, 0.0)
        total = self.step + max(int(left / per_step), 1)
        self.schedule.resize(total)
        self.schedule.calibrated = True
        log.info(
            "time budget %.0f s: %.3f s/step, dev eval %.1f s -> %d steps in all",
            t.time_budget_s, step_s, eval_s, total,
        )


def train(cfg: RunConfig, data: str | Sequence[str | Path], out_dir: str | Path, **kwargs: Any) -> TrainResult:
    """Build a ``Trainer`` and run it; tears the process group down afterwards."""
    try:
        result = Trainer(cfg, data, out_dir, **kwargs).run()
    except BaseException:
        shutdown_distributed()
        raise
    shutdown_distributed(synchronise=True)
    return result


__all__ = ["SimulatedCrash", "TrainResult", "Trainer", "train"]
