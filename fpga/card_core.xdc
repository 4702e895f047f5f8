# Clock-domain crossings inside card_core (read with `read_xdc -ref card_core`, so every name
# is relative to a card_core instance). The crossings are async_fifo instances only
# (hdl/rtl/async_fifo.v): Gray-coded pointers through two-flop synchronizers, a reset
# handshake through two-flop synchronizers, and the FIFO memory, written in one domain and read
# in the other. The two clocks (axi_aclk 4.000 ns from the XDMA IP, ddr_clk 5.000 ns from the
# MIG) come with their IPs' own constraints and are asynchronous to each other.

# Gray pointers: at most one bit changes per sample, so they need no timing relation to the
# destination clock, only a bounded skew between their bits: one period of the faster clock,
# without the clock skew (datapath only).
set_max_delay -datapath_only 4.000 \
    -from [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/wr_ptr_gray_reg[*]}] \
    -to [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/wr_ptr_gray_sync1_reg[*]}]
set_max_delay -datapath_only 4.000 \
    -from [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/rd_ptr_gray_reg[*]}] \
    -to [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/rd_ptr_gray_sync1_reg[*]}]

# The FIFO memory: an entry is written at least one synchronizer delay before its pointer
# shows it on the other side, so its read path is bounded like the pointers.
set_max_delay -datapath_only 4.000 \
    -from [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/mem_reg*}] \
    -to [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/m_data_reg_reg[*]}]

# The reset handshake: single-bit levels held for many cycles, sampled by two-flop
# synchronizers (ASYNC_REG); no timing relation is needed into their first flop.
set_false_path -to [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/s_req_sync1_reg}]
set_false_path -to [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/s_ack_sync1_reg}]
set_false_path -to [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/m_req_sync1_reg}]
set_false_path -to [get_cells -hierarchical -filter {NAME =~ *_fifo_inst/m_ack_sync1_reg}]
