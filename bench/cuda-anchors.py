# Native CUDA on the GPU machine's card, the ceiling parle's WebGPU path is held against: scan,
# radix sort (CUB) and run-length encoding through PyTorch, and host <-> device copies. Prints one
# line a figure; `bash bench/gpu-machine.sh run cuda-anchors` stores it as cuda-anchors.txt, which
# the comparison suite's report folds in (bench/suite/report.mjs parseCudaAnchors).
import torch, time
d = 'cuda'
print(torch.cuda.get_device_name(0))
def bench(f, reps=10):
    for _ in range(3): f()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        s.record(); f(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]
for n in [1<<20, 1<<24, 1<<28]:
    x = torch.randint(0, 1<<30, (n,), device=d, dtype=torch.int32)
    t = bench(lambda: torch.cumsum(x, 0, dtype=torch.int32)); print(f'scan int32 n=2^{n.bit_length()-1} ms={t:.3f} Gelem/s={n/t/1e6:.2f}')
    t = bench(lambda: torch.sort(x)); print(f'sort int32 n=2^{n.bit_length()-1} ms={t:.3f} Gkeys/s={n/t/1e6:.2f}')
    # RLE on bytes with mean run length 16
    runs = torch.randint(1, 32, (n//16+1,), device=d)
    vals = torch.randint(0, 256, (runs.numel(),), device=d, dtype=torch.uint8)
    y = torch.repeat_interleave(vals, runs)[:n].contiguous()
    t = bench(lambda: torch.unique_consecutive(y, return_counts=True)); print(f'rle uint8 meanrun16 n=2^{n.bit_length()-1} ms={t:.3f} GB/s={n/t/1e6:.2f}')
    u, c = torch.unique_consecutive(y, return_counts=True)
    t = bench(lambda: torch.repeat_interleave(u, c)); print(f'rle-decode uint8 n=2^{n.bit_length()-1} ms={t:.3f} GB/s={n/t/1e6:.2f}')
for pinned in [False, True]:
    h = torch.empty(1<<28, dtype=torch.uint8, pin_memory=pinned); h.fill_(1)
    g = torch.empty(1<<28, dtype=torch.uint8, device=d)
    t = bench(lambda: g.copy_(h, non_blocking=pinned)); print(f'h2d 256MiB pinned={pinned} ms={t:.3f} GB/s={(1<<28)/t/1e6:.2f}')
    t = bench(lambda: h.copy_(g, non_blocking=pinned)); print(f'd2h 256MiB pinned={pinned} ms={t:.3f} GB/s={(1<<28)/t/1e6:.2f}')
a = torch.empty(1<<30, dtype=torch.uint8, device=d); b = torch.empty_like(a)
t = bench(lambda: b.copy_(a)); print(f'd2d copy 1GiB ms={t:.3f} GB/s(r+w)={2*(1<<30)/t/1e6:.1f}')
