"""Which warps run each CUDA line of a warp-specialised kernel: the quickstart GEMM for sm_90 splits its threads into
a producer warpgroup (the TMA loads) and a consumer warpgroup (the wgmma and the epilogue)."""

from __future__ import annotations

from tabdata import quickstart_record

from tilelab.warp_roles import CONSUMER, PRODUCER, warp_roles


def lines_of(role: str, roles: dict[int, str], device: list[str]) -> str:
    return "\n".join(device[line - 1] for line, named in sorted(roles.items()) if named == role)


def test_the_quickstart_gemms_producer_lines_load_and_its_consumer_lines_do_the_math():
    device = quickstart_record().source.device.splitlines()

    roles = warp_roles("\n".join(device))

    producer, consumer = lines_of(PRODUCER, roles, device), lines_of(CONSUMER, roles, device)
    assert "tl::tma_load(" in producer and "warpgroup_reg_dealloc" in producer and "wgmma" not in producer
    assert "tl::wgmma_ss<" in consumer and "warpgroup_reg_alloc" in consumer and "tma_load" not in consumer
    split = next(index for index, line in enumerate(device, 1) if "threadIdx.x) < 128) {" in line)
    assert split not in roles and roles[split + 1] == PRODUCER  # the test itself runs on every warp
    assert not any(line in roles for line, text in enumerate(device, 1) if "mbarrier[0].init" in text or "__syncthreads" in text)


def test_a_split_with_the_consumers_first_is_read_the_other_way_round():
    device = """\
if (((int)threadIdx.x) < 256) {
  tl::wgmma_ss<half_t, half_t, float>(desc_a, desc_b, C_local);
} else {
  tl::tma_load(A_desc, mbarrier[0], A_shared, k, by);
}"""

    assert warp_roles(device) == {2: CONSUMER, 4: PRODUCER}


def test_a_kernel_without_a_producer_and_consumers_gets_no_roles():
    guard = """\
if (((int)threadIdx.x) < 32) {
  red_buf[((int)threadIdx.x)] = x;
}"""
    both_compute = """\
if (((int)threadIdx.x) < 128) {
  tl::mma_sync<half_t>(C_local, A_local, B_local);
} else {
  tl::mma_sync<half_t>(D_local, A_local, B_local);
}"""

    assert warp_roles(guard) == {} and warp_roles(both_compute) == {} and warp_roles("") == {}
