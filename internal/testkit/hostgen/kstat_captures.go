package hostgen

// The kstats of OpenZFS 2.4.4 in the guest's 01-created scenario
// (collector/testdata/openzfs-2.4-guest), as /proc/spl/kstat/zfs holds
// them; a pool's are r10's, with {pool} for its name.
const (
	// arcstats
	arcstatsKstat = `19 1 0x01 148 40256 52941063514 111596662782
name                            type data
hits                            4    6913
iohits                          4    0
misses                          4    0
demand_data_hits                4    0
demand_data_iohits              4    0
demand_data_misses              4    0
demand_metadata_hits            4    6913
demand_metadata_iohits          4    0
demand_metadata_misses          4    0
prefetch_data_hits              4    0
prefetch_data_iohits            4    0
prefetch_data_misses            4    0
prefetch_metadata_hits          4    0
prefetch_metadata_iohits        4    0
prefetch_metadata_misses        4    0
mru_hits                        4    1120
mru_ghost_hits                  4    0
mfu_hits                        4    5793
mfu_ghost_hits                  4    0
uncached_hits                   4    0
deleted                         4    0
mutex_miss                      4    0
access_skip                     4    0
evict_skip                      4    0
evict_not_enough                4    0
evict_l2_cached                 4    0
evict_l2_eligible               4    0
evict_l2_eligible_mfu           4    0
evict_l2_eligible_mru           4    0
evict_l2_ineligible             4    0
evict_l2_skip                   4    0
hash_elements                   4    938
hash_elements_max               4    938
hash_collisions                 4    1
hash_chains                     4    1
hash_chain_max                  4    1
meta                            4    1073741824
pd                              4    2147483648
pm                              4    2147483648
c                               4    155052544
c_min                           4    97511936
c_max                           4    2046640128
size                            4    111157304
compressed_size                 4    100920320
uncompressed_size               4    110059008
overhead_size                   4    9578496
hdr_size                        4    230752
data_size                       4    104595456
metadata_size                   4    5903360
dbuf_size                       4    90896
dnode_size                      4    251784
bonus_size                      4    34880
anon_size                       4    0
anon_data                       4    0
anon_metadata                   4    0
anon_evictable_data             4    0
anon_evictable_metadata         4    0
mru_size                        4    109963776
mru_data                        4    104595456
mru_metadata                    4    5368320
mru_evictable_data              4    96731136
mru_evictable_metadata          4    82432
mru_ghost_size                  4    0
mru_ghost_data                  4    0
mru_ghost_metadata              4    0
mru_ghost_evictable_data        4    0
mru_ghost_evictable_metadata    4    0
mfu_size                        4    535040
mfu_data                        4    0
mfu_metadata                    4    535040
mfu_evictable_data              4    0
mfu_evictable_metadata          4    4096
mfu_ghost_size                  4    0
mfu_ghost_data                  4    0
mfu_ghost_metadata              4    0
mfu_ghost_evictable_data        4    0
mfu_ghost_evictable_metadata    4    0
uncached_size                   4    0
uncached_data                   4    0
uncached_metadata               4    0
uncached_evictable_data         4    0
uncached_evictable_metadata     4    0
l2_ndev                         4    1
l2_hits                         4    0
l2_misses                       4    0
l2_prefetch_asize               4    0
l2_mru_asize                    4    25190912
l2_mfu_asize                    4    1024
l2_bufc_data_asize              4    25165824
l2_bufc_metadata_asize          4    26112
l2_feeds                        4    18
l2_rw_clash                     4    0
l2_read_bytes                   4    0
l2_write_bytes                  4    25199616
l2_writes_sent                  4    14
l2_writes_done                  4    14
l2_writes_error                 4    0
l2_writes_lock_retry            4    0
l2_evict_lock_retry             4    0
l2_evict_reading                4    0
l2_evict_l1cached               4    0
l2_free_on_write                4    0
l2_abort_lowmem                 4    0
l2_cksum_bad                    4    0
l2_io_error                     4    0
l2_size                         4    26315264
l2_asize                        4    25191936
l2_hdr_size                     4    0
l2_log_blk_writes               4    0
l2_log_blk_avg_asize            4    0
l2_log_blk_asize                4    0
l2_log_blk_count                4    0
l2_data_to_meta_ratio           4    0
l2_rebuild_success              4    0
l2_rebuild_unsupported          4    0
l2_rebuild_io_errors            4    0
l2_rebuild_dh_errors            4    1
l2_rebuild_cksum_lb_errors      4    0
l2_rebuild_lowmem               4    0
l2_rebuild_size                 4    0
l2_rebuild_asize                4    0
l2_rebuild_bufs                 4    0
l2_rebuild_bufs_precached       4    0
l2_rebuild_log_blks             4    0
memory_throttle_count           4    0
memory_direct_count             4    0
memory_indirect_count           4    0
memory_all_bytes                4    3120381952
memory_free_bytes               4    2787364864
memory_available_bytes          3    2636231168
arc_no_grow                     4    0
arc_tempreserve                 4    0
arc_loaned_bytes                4    0
arc_prune                       4    0
arc_meta_used                   4    6511672
arc_dnode_limit                 4    204664012
async_upgrade_sync              4    0
predictive_prefetch             4    0
demand_hit_predictive_prefetch  4    0
demand_iohit_predictive_prefetch 4    0
prescient_prefetch              4    0
demand_hit_prescient_prefetch   4    0
demand_iohit_prescient_prefetch 4    0
arc_need_free                   4    0
arc_sys_free                    4    151133696
arc_raw_size                    4    0
cached_only_in_progress         4    0
abd_chunk_waste_size            4    50176
`
	// zil
	zilKstat = `23 1 0x01 21 5712 52950187258 111612218713
name                            type data
zil_commit_count                4    4
zil_commit_writer_count         4    4
zil_commit_error_count          4    0
zil_commit_stall_count          4    0
zil_commit_suspend_count        4    0
zil_commit_crash_count          4    0
zil_itx_count                   4    0
zil_itx_indirect_count          4    0
zil_itx_indirect_bytes          4    0
zil_itx_copied_count            4    0
zil_itx_copied_bytes            4    0
zil_itx_needcopy_count          4    0
zil_itx_needcopy_bytes          4    0
zil_itx_metaslab_normal_count   4    3
zil_itx_metaslab_normal_bytes   4    552
zil_itx_metaslab_normal_write   4    12288
zil_itx_metaslab_normal_alloc   4    12288
zil_itx_metaslab_slog_count     4    1
zil_itx_metaslab_slog_bytes     4    184
zil_itx_metaslab_slog_write     4    4096
zil_itx_metaslab_slog_alloc     4    4096
`
	// dmu_tx
	dmuTxKstat = `16 1 0x01 13 3536 52924719466 111622388595
name                            type data
dmu_tx_assigned                 4    833
dmu_tx_delay                    4    0
dmu_tx_error                    4    0
dmu_tx_suspended                4    0
dmu_tx_group                    4    0
dmu_tx_memory_reserve           4    0
dmu_tx_memory_reclaim           4    0
dmu_tx_dirty_throttle           4    0
dmu_tx_dirty_delay              4    0
dmu_tx_dirty_over_max           4    0
dmu_tx_dirty_frees_delay        4    0
dmu_tx_wrlog_delay              4    0
dmu_tx_quota                    4    0
`
	// abdstats
	abdKstat = `13 1 0x01 20 5440 52922289517 111635066925
name                            type data
struct_size                     4    90144
linear_cnt                      4    133
linear_data_size                4    106496
scatter_cnt                     4    806
scatter_data_size               4    100817920
scatter_chunk_waste             4    50176
scatter_order_0                 4    33
scatter_order_1                 4    8
scatter_order_2                 4    0
scatter_order_3                 4    0
scatter_order_4                 4    0
scatter_order_5                 4    768
scatter_order_6                 4    0
scatter_order_7                 4    0
scatter_order_8                 4    0
scatter_order_9                 4    0
scatter_page_multi_chunk        4    5
scatter_page_multi_zone         4    0
scatter_page_alloc_retry        4    0
scatter_sg_table_retry          4    0
`
	// zfetchstats
	zfetchKstat = `15 1 0x01 8 2176 52924671645 111646993817
name                            type data
hits                            4    0
future                          4    0
stride                          4    0
past                            4    0
misses                          4    0
max_streams                     4    0
io_issued                       4    0
io_active                       4    0
`
	// <pool>/iostats
	poolIostatsKstat = `74 1 0x01 26 7072 82789491643 111715819207
name                            type data
trim_extents_written            4    0
trim_bytes_written              4    0
trim_extents_skipped            4    0
trim_bytes_skipped              4    0
trim_extents_failed             4    0
trim_bytes_failed               4    0
autotrim_extents_written        4    0
autotrim_bytes_written          4    0
autotrim_extents_skipped        4    0
autotrim_bytes_skipped          4    0
autotrim_extents_failed         4    0
autotrim_bytes_failed           4    0
simple_trim_extents_written     4    0
simple_trim_bytes_written       4    0
simple_trim_extents_skipped     4    0
simple_trim_bytes_skipped       4    0
simple_trim_extents_failed      4    0
simple_trim_bytes_failed        4    0
arc_read_count                  4    0
arc_read_bytes                  4    0
arc_write_count                 4    411
arc_write_bytes                 4    25247680
direct_read_count               4    0
direct_read_bytes               4    0
direct_write_count              4    0
direct_write_bytes              4    0
`
	// <pool>/objset-0x36
	poolObjsetKstat = `106 1 0x01 28 7872 84356683903 111808786619
name                            type data
dataset_name                    7    {pool}
writes                          4    24
nwritten                        4    25165824
reads                           4    0
nread                           4    0
nunlinks                        4    0
nunlinked                       4    0
zil_commit_count                4    1
zil_commit_writer_count         4    1
zil_commit_error_count          4    0
zil_commit_stall_count          4    0
zil_commit_suspend_count        4    0
zil_commit_crash_count          4    0
zil_itx_count                   4    0
zil_itx_indirect_count          4    0
zil_itx_indirect_bytes          4    0
zil_itx_copied_count            4    0
zil_itx_copied_bytes            4    0
zil_itx_needcopy_count          4    0
zil_itx_needcopy_bytes          4    0
zil_itx_metaslab_normal_count   4    1
zil_itx_metaslab_normal_bytes   4    184
zil_itx_metaslab_normal_write   4    4096
zil_itx_metaslab_normal_alloc   4    4096
zil_itx_metaslab_slog_count     4    0
zil_itx_metaslab_slog_bytes     4    0
zil_itx_metaslab_slog_write     4    0
zil_itx_metaslab_slog_alloc     4    0
`
	// <pool>/txgs
	poolTxgsKstat = `txg      birth            state ndirty       nread        nwritten     reads    writes   otime        qtime        wtime        stime       
5        83123629196      C     0            0            173056       0        101      639969810    39405        4122998      452828453   
6        83763599006      C     688128       0            186368       0        138      772193064    63451        4012457      238006568   
7        84535792070      C     2294272      0            3066880      0        115      242183518    24386        108366       230449492   
8        84777975588      C     4997120      0            8555520      0        110      230764110    52029        67999        818913175   
9        85008739698      C     20332544     0            39249920     0        227      1159161343   70825        194219       405621257   
10       86167901041      C     0            0            138240       0        86       5196802869   31389        114047       121480924   
11       91364703910      C     0            0            0            0        0        5123270090   38112        715260       965635      
12       96487974000      C     0            0            0            0        0        5127572468   57439        151087       1184572     
13       101615546468     C     0            0            0            0        0        5108752202   45898        118485       913516      
14       106724298670     O     0            0            0            0        0        0            0            0            0           
`
)
