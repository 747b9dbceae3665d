// SPDX-License-Identifier: MIT
/* The communicator NCCL tunes for (CsNcclSystem), from a topology: an emulation of NCCL's
 * topology search that nccl.c's model takes as its input.
 *
 * Sources (read, not copied):
 *   NVIDIA/nccl src/graph/search.cc  the per-generation speed arrays, channel duplication
 *     (ncclTopoCompute, ncclTopoDupChannels) and the tree graph's second pass;
 *   NVIDIA/nccl src/graph/topo.h     the NVLink bandwidth NCCL assumes per link and generation.
 * Bandwidths are in GB/s (1e9 B/s), as in NCCL. */
#include "base/trace.h"
#include "base/union_find.h"
#include "models/nccl.h"

#include <math.h>
#include <string.h>

/**
 * cs_nccl_arch_from_model:
 * The generation a GPU model string names. NCCL indexes its tables by compute capability:
 * >= 100 Blackwell, >= 90 Hopper, >= 80 Ampere (Ada too), else Volta (Turing too).
 */
CsNcclArch
cs_nccl_arch_from_model(const char *model, gboolean *recognised)
{
    static const struct {
        const char *token;
        CsNcclArch arch;
    } table[] = {
        { "GB200", CS_NCCL_ARCH_BLACKWELL }, { "GB300", CS_NCCL_ARCH_BLACKWELL },
        { "B200", CS_NCCL_ARCH_BLACKWELL },  { "B100", CS_NCCL_ARCH_BLACKWELL },
        { "B300", CS_NCCL_ARCH_BLACKWELL },  { "BLACKWELL", CS_NCCL_ARCH_BLACKWELL },
        { "GH200", CS_NCCL_ARCH_HOPPER },    { "H100", CS_NCCL_ARCH_HOPPER },
        { "H200", CS_NCCL_ARCH_HOPPER },     { "H800", CS_NCCL_ARCH_HOPPER },
        { "H20", CS_NCCL_ARCH_HOPPER },      { "HOPPER", CS_NCCL_ARCH_HOPPER },
        { "A100", CS_NCCL_ARCH_AMPERE },     { "A800", CS_NCCL_ARCH_AMPERE },
        { "A30", CS_NCCL_ARCH_AMPERE },      { "A40", CS_NCCL_ARCH_AMPERE },
        { "A10", CS_NCCL_ARCH_AMPERE },      { "L40", CS_NCCL_ARCH_AMPERE },
        { "L4", CS_NCCL_ARCH_AMPERE },       { "RTX 30", CS_NCCL_ARCH_AMPERE },
        { "RTX 40", CS_NCCL_ARCH_AMPERE },   { "AMPERE", CS_NCCL_ARCH_AMPERE },
        { "ADA", CS_NCCL_ARCH_AMPERE },      { "V100", CS_NCCL_ARCH_VOLTA },
        { "T4", CS_NCCL_ARCH_VOLTA },        { "2080", CS_NCCL_ARCH_VOLTA },
        { "VOLTA", CS_NCCL_ARCH_VOLTA },     { "TURING", CS_NCCL_ARCH_VOLTA },
    };

    if (recognised != NULL)
        *recognised = FALSE;
    if (model == NULL)
        return CS_NCCL_ARCH_HOPPER;
    g_autofree char *upper = g_ascii_strup(model, -1);
    for (gsize i = 0; i < G_N_ELEMENTS(table); i++) {
        if (strstr(upper, table[i].token) != NULL) {
            if (recognised != NULL)
                *recognised = TRUE;
            return table[i].arch;
        }
    }
    return CS_NCCL_ARCH_HOPPER;
}

/**
 * cs_nccl_amd_arch_from_model:
 * The AMD architecture (the gcn name RCCL's IsArchMatch() tests) a GPU model string names.
 */
CsNcclAmdArch
cs_nccl_amd_arch_from_model(const char *model)
{
    static const struct {
        const char *token;
        CsNcclAmdArch arch;
    } table[] = {
        { "MI355", CS_NCCL_AMD_GFX950 },  { "MI350", CS_NCCL_AMD_GFX950 },
        { "MI325", CS_NCCL_AMD_GFX942 },  { "MI300", CS_NCCL_AMD_GFX942 },
        { "MI250", CS_NCCL_AMD_GFX90A },  { "MI210", CS_NCCL_AMD_GFX90A },
        { "GFX950", CS_NCCL_AMD_GFX950 }, { "GFX942", CS_NCCL_AMD_GFX942 },
        { "GFX90A", CS_NCCL_AMD_GFX90A }, { "INSTINCT", CS_NCCL_AMD_OTHER },
        { "RADEON", CS_NCCL_AMD_OTHER },  { "AMD", CS_NCCL_AMD_OTHER },
    };
    if (model == NULL)
        return CS_NCCL_AMD_NONE;
    g_autofree char *upper = g_ascii_strup(model, -1);
    for (gsize i = 0; i < G_N_ELEMENTS(table); i++)
        if (strstr(upper, table[i].token) != NULL)
            return table[i].arch;
    return CS_NCCL_AMD_NONE;
}

const char *
cs_nccl_amd_arch_name(CsNcclAmdArch arch)
{
    switch (arch) {
    case CS_NCCL_AMD_GFX90A:
        return "gfx90a";
    case CS_NCCL_AMD_GFX942:
        return "gfx942";
    case CS_NCCL_AMD_GFX950:
        return "gfx950";
    case CS_NCCL_AMD_OTHER:
        return "AMD (other)";
    case CS_NCCL_AMD_NONE:
    default:
        return "";
    }
}

/* RCCL graph/topo.h ncclTopoXGMISpeed(): GB/s per xGMI link RCCL assumes, by the gcn name.
 * 2.21.5: GFX94X_XGMI_WIDTH 48 for "gfx94*", MI200_XGMI_WIDTH 36 for gfx90a, VEGA_XGMI_WIDTH
 * 24 for any other (gfx950 included: 2.21.5 predates it). 2.26 (ROCm/rccl topo.h 08814b0a):
 * 48 for "gfx942", GFX95X_XGMI_WIDTH 48 for "gfx95*", 36 for gfx90a, else 24. */
static double
rccl_xgmi_GBps(const CsNcclConstants *constants, CsNcclAmdArch arch)
{
    if (arch == CS_NCCL_AMD_GFX942)
        return 48.0;
    if (arch == CS_NCCL_AMD_GFX950 && constants->formula == CS_NCCL_FORMULA_RCCL_2_26)
        return 48.0;
    if (arch == CS_NCCL_AMD_GFX90A)
        return 36.0;
    return 24.0;
}

/* RCCL's system on @topo (the ROCm build). RCCL matches a node of 8 GPUs on xGMI against its
 * machine models before NCCL's search (rome_models.cc parseA2a8P(); 2.21.5: parseRome4P2H()),
 * and a match sets the graphs from the model's rings with bwIntra = bwInter = totalBw /
 * nChannels (parseGraph), so the tuning's bus bandwidth nChannels x bw is the GPU's totalBw:
 * the sum of its xGMI links at ncclTopoXGMISpeed() (search.cc ncclTopoSearchInit, getTotalBw).
 * The models an 8-GPU node on a full xGMI mesh (7 links per GPU) matches carry "tuning=5":
 * rome_model_79 (no NICs), rome_model_81 (8 NICs), rome_model_84 (16 NICs), all noCpuCheck;
 * from 2.26 a match on gfx950 sets tuning 6. Any other machine keeps topo->tuning = 0 (the
 * system is calloc'ed) and collsim's emulation of NCCL's search stands. LL128 needs the
 * model option ll128Enabled, which none of those sets. The match also compares NUMA and
 * NIC-GPU PCIe distances, which collsim's topologies do not hold: a node that differs there
 * would fall back to tuning 0 in RCCL. */
static void
rccl_system(const CsTopo *topo, int nranks, const CsNcclConstants *constants, CsNcclSystem *system)
{
    const double speed = rccl_xgmi_GBps(constants, system->amd_arch);
    const int n_dev = cs_topo_n_devices(topo);
    g_autofree int *xgmi_peers = g_new0(int, n_dev);
    g_autofree double *total = g_new0(double, n_dev);
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        const CsLink *link = cs_topo_link(topo, l);
        if (cs_link_kind_class(link->kind) != CS_LINK_CLASS_NVLINK)
            continue;
        if (cs_topo_device(topo, link->dst)->kind != CS_DEVICE_GPU)
            continue;
        xgmi_peers[link->src]++;
        total[link->src] += MAX(link->count, 1) * speed;
    }
    double total_bw = 0.0;
    gboolean full_mesh = TRUE;
    for (int r = 0; r < nranks; r++) {
        const int d = cs_topo_rank_device(topo, r);
        total_bw = MAX(total_bw, total[d]);
        if (xgmi_peers[d] != 7)
            full_mesh = FALSE;
    }
    const int local = system->n_ranks / system->n_nodes;
    const gboolean nics_match = system->n_nics == 0 || system->n_nics == 8 || system->n_nics == 16;
    if (local == 8 && full_mesh && nics_match && total_bw > 0.0) {
        /* 2.26 rome_models.cc: after the match, "if gfx950: system->tuning = 6". */
        system->rccl_tuning = constants->formula == CS_NCCL_FORMULA_RCCL_2_26
                                      && system->amd_arch == CS_NCCL_AMD_GFX950
                                  ? 6
                                  : 5;
        for (int a = CS_NCCL_ALGO_TREE; a <= CS_NCCL_ALGO_RING; a++) {
            CsNcclGraph *g = &system->graphs[a];
            const int n = MAX(g->n_channels, 1);
            g->n_channels = n;
            g->bw_intra_GBps = g->bw_inter_GBps = total_bw / n;
        }
        system->graphs[CS_NCCL_ALGO_PAT] = system->graphs[CS_NCCL_ALGO_TREE];
    }
    else {
        system->rccl_tuning = 0;
    }
}

void
cs_nccl_system_init(CsNcclSystem *system, int n_ranks, int n_nodes, CsNcclArch arch)
{
    g_return_if_fail(system != NULL);
    memset(system, 0, sizeof(*system));
    system->n_ranks = n_ranks;
    system->n_nodes = n_nodes;
    system->arch = arch;
}

/* topo.h SM70/SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 (GB/s per link,
 * per direction): what NCCL assumes whatever the datasheet says. */
static const double nvlink_lane_GBps[CS_NCCL_N_ARCHS] = { 20.0, 20.0, 20.6, 40.1 };

/* graph/topo.h LOC_BW (NCCL 2.28.9): a GPU's path to itself, GB/s. */
#define NCCL_LOC_GBps 5000.0

/* search.cc speedArrayIntra / sm90SpeedArrayIntra / sm100SpeedArrayIntra (GB/s per channel). */
static const double speeds_intra_generic[]
    = { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0 };
static const double speeds_intra_sm90[]
    = { 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0 };
static const double speeds_intra_sm100[]
    = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0 };
/* search.cc speedArrayInter / sm90SpeedArrayInter / sm100SpeedArrayInter. */
static const double speeds_inter_generic[]
    = { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
        7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12 };
static const double speeds_inter_sm90[] = { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                            15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12 };
static const double speeds_inter_sm100[] = { 96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                             17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12 };

typedef struct {
    const double *v;
    gsize n;
} SpeedArray;

static SpeedArray
speed_array(CsNcclArch arch, const CsNcclConstants *c, gboolean inter)
{
    SpeedArray s;
    /* 2.19 knows no sm100 array: a Blackwell GPU searches with the sm90 one. */
    if (arch == CS_NCCL_ARCH_BLACKWELL && c->formula == CS_NCCL_FORMULA_2_19)
        arch = CS_NCCL_ARCH_HOPPER;
    if (arch == CS_NCCL_ARCH_BLACKWELL) {
        s.v = inter ? speeds_inter_sm100 : speeds_intra_sm100;
        s.n = inter ? G_N_ELEMENTS(speeds_inter_sm100) : G_N_ELEMENTS(speeds_intra_sm100);
    }
    else if (arch == CS_NCCL_ARCH_HOPPER) {
        s.v = inter ? speeds_inter_sm90 : speeds_intra_sm90;
        s.n = inter ? G_N_ELEMENTS(speeds_inter_sm90) : G_N_ELEMENTS(speeds_intra_sm90);
    }
    else {
        s.v = inter ? speeds_inter_generic : speeds_intra_generic;
        s.n = inter ? G_N_ELEMENTS(speeds_inter_generic) : G_N_ELEMENTS(speeds_intra_generic);
    }
    return s;
}

/* The first speed of the array that one path carries and the GPU's total feeds at least
 * once (ncclTopoCompute's starting speedIndex). */
static double
first_speed(SpeedArray s, double max_path_GBps, double total_GBps)
{
    for (gsize i = 0; i < s.n; i++)
        if (s.v[i] <= max_path_GBps && s.v[i] <= total_GBps)
            return s.v[i];
    return s.v[s.n - 1];
}

/* floor(@x) as a count in [0, @cap]: how many channels of one speed a bandwidth holds. The
 * comparison is made in double, so a huge or infinite @x (one GPU, a 1e300 GB/s link in a
 * topology file) is @cap, never an out-of-range conversion to int. */
static int
floor_count(double x, int cap)
{
    const double n = floor(x + 1e-9);
    if (!(n > 0.0))
        return 0;
    return n >= (double)cap ? cap : (int)n;
}

/* What NCCL thinks a link carries, GB/s: NVLink lanes at NCCL's per-generation figure, other
 * links at their datasheet rate (NCCL reads PCIe width/speed and NIC speed from the system). */
static double
link_nccl_GBps(const CsLink *link, CsNcclArch arch)
{
    if (cs_link_kind_class(link->kind) == CS_LINK_CLASS_NVLINK)
        return MAX(link->count, 1) * nvlink_lane_GBps[arch];
    return link->raw_bw_Bps / 1e9;
}

/* ncclTopoDupChannels: fast channels are split in two so more SMs pull on them. */
static void
dup_channels(CsNcclGraph *g, CsNcclArch arch, int max_channels)
{
    if (g->bw_intra_GBps < 25.0)
        return;
    if (arch > CS_NCCL_ARCH_AMPERE && g->bw_intra_GBps < 50.0 && g->n_channels > 4)
        return;
    const int dup = MIN(g->n_channels * 2, max_channels);
    const int div = (dup + g->n_channels - 1) / g->n_channels;
    g->bw_intra_GBps /= div;
    g->bw_inter_GBps /= div;
    g->n_channels = dup;
}

/* ncclTopoCompute's second pass for a tree graph (search.cc, the same code in NCCL 2.19.3,
 * 2.20.3, 2.21.5 and 2.28.9): "increase bwIntra for trees (2 nodes or collnet)". Starting
 * from the array entry of the graph's inter speed (the network array when the system has
 * NICs), it searches again with the next faster entry as bwIntra, the channel count held
 * (minChannels = nChannels), while bwIntra < 2 x bwInter and the search succeeds; bwInter
 * stays. The inter speed after duplication must be an array entry (tmpGraph.bwIntra ==
 * graph->bwIntra), or nothing is raised. A GPU-to-GPU path carries bwIntra per channel: the
 * search fails once @max_path or the GPU's @total_GBps over its channels is exceeded. The
 * tuning reads bwIntra for 2 nodes or fewer and for CollNet (tuning.cc "nNodes <= 2 ||
 * collnet ? bwIntra : bwInter"), so on 2 nodes the tree's model bandwidth can reach twice the
 * ring's per channel: each node's NICs carry half the data a ring's do. */
static void
raise_tree_intra(CsNcclGraph *g, SpeedArray s, double max_path, double total_GBps)
{
    gsize i = 0;
    while (i < s.n - 1 && s.v[i] > g->bw_inter_GBps)
        i++;
    if (fabs(s.v[i] - g->bw_intra_GBps) > 1e-9)
        return;
    while (i > 0 && g->bw_intra_GBps < 2.0 * g->bw_inter_GBps) {
        const double next = s.v[i - 1];
        if (next > max_path + 1e-9 || g->n_channels * next > total_GBps + 1e-9)
            return;
        g->bw_intra_GBps = next;
        i--;
    }
}

/**
 * cs_nccl_nodes:
 * NCCL's nodes among the ranks @ranks[0 .. @nranks - 1] of @topo (its first @nranks ranks
 * when @ranks is NULL), as NCCL @constants' release counts them (NULL: the newest): the
 * topology's nodes, those an NVLink clique joins (MNNVL) as one. From NCCL 2.21.5 on, NCCL
 * fuses the topology of every GPU of a clique into one system (src/graph/topo.cc,
 * ncclTopoGetSystem under comm->MNNVL, ncclTopoFuseXml) and counts nodes by their rings'
 * first rank (init.cc, "Determine nNodes"): a rack of GB200 trays is one node, racks joined
 * by InfiniBand several. Before 2.21.5 NCCL took MNNVL only where one clique held every rank
 * (init.cc, 2.20.3: cliqueSize == nRanks); otherwise its nodes were the hosts. A node's ranks
 * and an NVLink island's are joined by union-find over the topology's nodes and islands.
 * @node: (out) (nullable): each rank's node, numbered from 0 in the order of first ranks.
 * Returns: how many nodes (at least 1).
 */
int
cs_nccl_nodes(const CsTopo *topo, int nranks, const int *ranks, const CsNcclConstants *constants,
              int *node)
{
    g_return_val_if_fail(topo != NULL && nranks >= 0, 1);
    const int n_topo_nodes = cs_topo_n_nodes(topo);
    const gsize n_sets = (gsize)n_topo_nodes + (gsize)cs_topo_n_ranks(topo);
    g_autofree int *parent = g_new(int, n_sets);
    g_autofree int *number = g_new(int, n_sets);
    for (gsize i = 0; i < n_sets; i++) {
        parent[i] = (int)i;
        number[i] = -1;
    }
    /* An island is numbered by its lowest rank (cs_topo_rank_island()), so its set's index
     * stays below n_topo_nodes + the topology's ranks whichever ranks are asked. */
    for (int i = 0; i < nranks; i++) {
        const int r = ranks != NULL ? ranks[i] : i;
        cs_uf_union(parent, cs_topo_rank_node(topo, r),
                    n_topo_nodes + cs_topo_rank_island(topo, r));
    }
    const gboolean fuses_cliques = constants == NULL || cs_nccl_constants_rccl(constants)
                                   || cs_nccl_release_code(constants->version) >= 22105;
    int n = 0;
    int first_root = -1;
    gboolean one_clique = TRUE;
    for (int i = 0; i < nranks; i++) {
        const int r = ranks != NULL ? ranks[i] : i;
        const int root = cs_uf_find(parent, cs_topo_rank_node(topo, r));
        first_root = first_root < 0 ? root : first_root;
        one_clique = one_clique && root == first_root;
    }
    for (int i = 0; i < nranks; i++) {
        const int r = ranks != NULL ? ranks[i] : i;
        const int key = fuses_cliques || one_clique ? cs_uf_find(parent, cs_topo_rank_node(topo, r))
                                                    : cs_topo_rank_node(topo, r);
        if (number[key] < 0)
            number[key] = n++;
        if (node != NULL)
            node[i] = number[key];
    }
    return MAX(n, 1);
}

/**
 * cs_nccl_system_from_topo:
 * What NCCL's topology search would most likely find on @topo, from the first @nranks ranks.
 * The emulation follows search.cc's shape, not its backtracking:
 *   - NVLink links count at NCCL's per-generation rate (20.6 GB/s per link on Hopper), other
 *     links at their datasheet rate; the GPU generation comes from the GPU model string;
 *   - inside a node, the channel speed is the first entry of the generation's speed array that
 *     one GPU-to-GPU path carries, and the ring gets as many channels as the GPU's total
 *     bandwidth feeds at that speed (capped at MAXCHANNELS/2); across nodes the speed also fits
 *     one NIC and the NICs of a node bound the channels;
 *   - ncclTopoDupChannels then doubles fast channels; tree graphs equal ring graphs but for
 *     the second pass that raises their intra speed (raise_tree_intra); NVLS uses
 *     NCCL_NVLS_NCHANNELS channels; CollNet exists only with SHARP, one channel per NIC.
 * NCCL's real search is a timed backtracking search and may settle elsewhere on irregular
 * machines; NCCL_GRAPH_DUMP_FILE shows what it found.
 */
gboolean
cs_nccl_system_from_topo(const CsTopo *topo, int nranks, const CsNcclConstants *constants,
                         CsNcclSystem *system, GError **error)
{
    g_return_val_if_fail(topo != NULL && constants != NULL && system != NULL, FALSE);
    const int all = cs_topo_n_ranks(topo);
    if (nranks <= 0)
        nranks = all;
    if (nranks > all) {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                    "%s: %d ranks asked, the topology has %d", cs_topo_name(topo), nranks, all);
        return FALSE;
    }

    /* Each rank's NCCL node (cs_nccl_nodes()). */
    g_autofree int *nccl_node = g_new(int, nranks);
    const int n_nodes = cs_nccl_nodes(topo, nranks, NULL, constants, nccl_node);

    gboolean recognised = FALSE;
    const CsDevice *gpu0 = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
    const CsNcclArch arch = cs_nccl_arch_from_model(gpu0->model, &recognised);
    cs_nccl_system_init(system, nranks, n_nodes, arch);
    system->amd_arch = cs_nccl_amd_arch_from_model(gpu0->model);
    /* NCCL's model knows NVIDIA generations, RCCL's AMD architectures. */
    const gboolean rccl = cs_nccl_constants_rccl(constants);
    system->arch_guessed = rccl ? system->amd_arch == CS_NCCL_AMD_NONE : !recognised;
    system->collnet = system->n_nodes > 1 && cs_topo_has_sharp(topo);

    /* Intra-node paths: the widest single path (system->maxBw), every path NVLink or not, and
     * the GPU's total bandwidth over its NVLink (or PCI) links (system->totalBw). */
    double max_path = 0.0;
    gboolean all_nvlink = TRUE;
    gboolean have_pairs = FALSE;
    /* The pairs of one NCCL node: ranks bucketed by it, so a machine of thousands of nodes
     * costs its nodes' pairs, not every pair. */
    g_autofree int *node_first = g_new0(int, n_nodes + 1);
    g_autofree int *node_ranks = g_new(int, nranks);
    for (int r = 0; r < nranks; r++)
        node_first[nccl_node[r] + 1]++;
    for (int n = 0; n < n_nodes; n++)
        node_first[n + 1] += node_first[n];
    {
        g_autofree int *fill = g_memdup2(node_first, sizeof(int) * (gsize)n_nodes);
        for (int r = 0; r < nranks; r++)
            node_ranks[fill[nccl_node[r]]++] = r;
    }
    for (int r = 0; r < nranks; r++) {
        const int node = nccl_node[r];
        for (int k = node_first[node]; k < node_first[node + 1]; k++) {
            const int q = node_ranks[k];
            if (q == r)
                continue;
            const CsRoute *route = cs_topo_route(topo, r, q);
            double path = G_MAXDOUBLE;
            for (int i = 0; i < route->n_links; i++)
                path = MIN(path, link_nccl_GBps(cs_topo_link(topo, route->links[i]), arch));
            if (route->n_links == 0)
                continue;
            have_pairs = TRUE;
            max_path = MAX(max_path, path);
            if (route->link_class != CS_LINK_CLASS_NVLINK)
                all_nvlink = FALSE;
        }
    }
    const CsLinkClass intra_class = all_nvlink ? CS_LINK_CLASS_NVLINK : CS_LINK_CLASS_PCI;
    /* Each device's bandwidth out over those links, in one pass over the links (a pass per
     * rank is quadratic on a machine of thousands of GPUs). */
    double total_intra = G_MAXDOUBLE;
    g_autofree double *out_GBps = g_new0(double, cs_topo_n_devices(topo));
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        const CsLink *link = cs_topo_link(topo, l);
        const CsLinkClass cls = cs_link_kind_class(link->kind);
        if (cls == intra_class || (intra_class == CS_LINK_CLASS_PCI && cls != CS_LINK_CLASS_NET))
            out_GBps[link->src] += link_nccl_GBps(link, arch);
    }
    for (int r = 0; r < nranks; r++)
        total_intra = MIN(total_intra, out_GBps[cs_topo_rank_device(topo, r)]);
    /* One GPU alone on its node: search.cc ncclTopoSearchInit (NCCL 2.28.9) sets maxBw =
     * totalBw = LOC_BW (5000 GB/s, graph/topo.h) when there is no network; across nodes the
     * network bounds the search and no intra-node figure applies. */
    if (!have_pairs)
        max_path = total_intra = system->n_nodes == 1 ? NCCL_LOC_GBps : G_MAXDOUBLE;

    /* NVSwitches and NICs of the first NCCL node: every topology node of its clique. An
     * NVL72 rack's NVLink switches belong to no tray (node -1): an NVSwitch counts where it
     * links to a GPU of that node (NCCL looks for any NVSwitch, tuning.cc). */
    const int n_topo_nodes = cs_topo_n_nodes(topo);
    g_autofree gboolean *in_node0 = g_new0(gboolean, MAX(n_topo_nodes, 1));
    g_autofree gboolean *gpu_node0 = g_new0(gboolean, MAX(cs_topo_n_devices(topo), 1));
    for (int r = 0; r < nranks; r++)
        if (nccl_node[r] == 0) {
            in_node0[cs_topo_rank_node(topo, r)] = TRUE;
            gpu_node0[cs_topo_rank_device(topo, r)] = TRUE;
        }
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        const CsLink *link = cs_topo_link(topo, l);
        if (gpu_node0[link->src] && cs_topo_device(topo, link->dst)->kind == CS_DEVICE_NVSWITCH)
            system->nvswitch = TRUE;
    }
    double nic_GBps = 0.0;
    for (int d = 0; d < cs_topo_n_devices(topo); d++) {
        const CsDevice *dev = cs_topo_device(topo, d);
        if (dev->node < 0 || dev->node >= n_topo_nodes || !in_node0[dev->node])
            continue;
        if (dev->kind == CS_DEVICE_NVSWITCH)
            system->nvswitch = TRUE;
        if (dev->kind != CS_DEVICE_NIC)
            continue;
        system->n_nics++;
        for (int l = 0; l < cs_topo_n_links(topo); l++) {
            const CsLink *link = cs_topo_link(topo, l);
            if (link->src == d && cs_link_kind_class(link->kind) == CS_LINK_CLASS_NET)
                nic_GBps = MAX(nic_GBps, link_nccl_GBps(link, arch));
        }
    }

    const int max_ch = constants->max_ring_channels;
    CsNcclGraph ring = { 0 };
    ring.hw_intra
        = intra_class == CS_LINK_CLASS_NVLINK || !have_pairs ? CS_NCCL_HW_NVLINK : CS_NCCL_HW_PCI;
    /* LL128 needs NVLink inside the node (typeIntra <= PATH_NVB); one GPU per node is LOC. */
    ring.ll128 = intra_class == CS_LINK_CLASS_NVLINK || !have_pairs;
    ring.same_channels = TRUE;
    /* search.cc: a graph that crosses the network takes its NIC's latency (the net plugin's
     * ncclNetProperties_t.latency); every graph below copies it. */
    if (system->n_nodes > 1 && cs_topo_transport(topo)->kind != NULL)
        ring.latency_inter_us = cs_topo_transport(topo)->reported_s * 1e6;
    if (system->n_nodes == 1) {
        const double s = first_speed(speed_array(arch, constants, FALSE), max_path, total_intra);
        ring.n_channels = CLAMP(floor_count(total_intra / s, max_ch), 1, max_ch);
        ring.bw_intra_GBps = ring.bw_inter_GBps = s;
    }
    else {
        const int n_nics = MAX(system->n_nics, 1);
        if (nic_GBps <= 0.0)
            nic_GBps = 12.5; /* no NIC link found: a 100 Gb/s NIC, NCCL's usual floor */
        const double s
            = first_speed(speed_array(arch, constants, TRUE), MIN(nic_GBps, max_path), total_intra);
        int n = n_nics * MAX(1, floor_count(nic_GBps / s, max_ch));
        if (have_pairs)
            n = MIN(n, floor_count(total_intra / s, max_ch));
        ring.n_channels = CLAMP(n, 1, max_ch);
        ring.bw_intra_GBps = ring.bw_inter_GBps = s;
    }
    dup_channels(&ring, arch, max_ch);
    system->graphs[CS_NCCL_ALGO_RING] = ring;

    CsNcclGraph tree = ring;
    /* search.cc: from Hopper on, trees across nodes use the plain TREE pattern. */
    tree.tree_pattern = system->n_nodes > 1 && arch >= CS_NCCL_ARCH_HOPPER;
    raise_tree_intra(&tree, speed_array(arch, constants, system->n_nodes > 1), max_path,
                     total_intra);
    system->graphs[CS_NCCL_ALGO_TREE] = tree;
    /* 2.23+ runs PAT on the tree graph. */
    system->graphs[CS_NCCL_ALGO_PAT] = tree;

    if (cs_topo_has_nvls(topo) && arch >= CS_NCCL_ARCH_HOPPER) {
        CsNcclGraph nvls = ring;
        /* search.cc: the NVLS graph has one channel per head, one head per local GPU (at most
         * NCCL_MAX_NVLS_ARITY 32), and the tuning reads its bandwidth from those channels (the
         * CTAs NVLS runs with, NCCL_NVLS_NCHANNELS, are another count). The intra speed is the
         * first the heads fit in the GPU's NVLink at; on one node the inter speed keeps the
         * search's starting speed. NCCL 2.19.4 on an 8 x H100 NVSwitch box logs "Pattern 5,
         * nChannels 8, bw 40.000000/60.000000" (NVIDIA/nccl issue 1197). */
        const int local = MAX(1, system->n_ranks / system->n_nodes);
        nvls.n_channels = MIN(local, CS_NCCL_MAX_NVLS_ARITY);
        const SpeedArray sa = speed_array(arch, constants, FALSE);
        nvls.bw_intra_GBps = first_speed(sa, max_path, total_intra / nvls.n_channels);
        nvls.bw_inter_GBps = first_speed(sa, max_path, total_intra);
        if (system->n_nodes > 1) {
            const double per_ch = MAX(system->n_nics, 1) * nic_GBps / nvls.n_channels;
            nvls.bw_inter_GBps = first_speed(speed_array(arch, constants, TRUE), per_ch, per_ch);
        }
        system->graphs[CS_NCCL_ALGO_NVLS] = nvls;
        system->graphs[CS_NCCL_ALGO_NVLS_TREE] = nvls;
    }
    if (system->collnet) {
        CsNcclGraph cn = ring;
        /* One channel per NIC, within what init.cc and search.cc allow: CollNet Chain's
         * graph at most the ring's channels (maxChannels = ringGraph->nChannels), CollNet
         * Direct's at most NCCL_MAX_DIRECT_ARITY + 1 = 8 heads and the node's GPUs. */
        const int local = MAX(1, system->n_ranks / system->n_nodes);
        cn.n_channels = MIN(MAX(system->n_nics, 1), ring.n_channels);
        cn.bw_intra_GBps = cn.bw_inter_GBps
            = first_speed(speed_array(arch, constants, TRUE), nic_GBps, nic_GBps);
        /* The CollNet graphs (TREE and COLLNET_DIRECT patterns) take the same second pass,
         * and the tuning reads their bwIntra at any node count. */
        raise_tree_intra(&cn, speed_array(arch, constants, TRUE), max_path, total_intra);
        system->graphs[CS_NCCL_ALGO_COLLNET_CHAIN] = cn;
        cn.n_channels = MIN(MAX(system->n_nics, 1), MIN(CS_NCCL_MAX_DIRECT_ARITY + 1, local));
        system->graphs[CS_NCCL_ALGO_COLLNET_DIRECT] = cn;
    }
    if (cs_nccl_constants_rccl(constants))
        rccl_system(topo, nranks, constants, system);
    return TRUE;
}
