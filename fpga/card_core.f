# card_core and every module below it: the one file list of the card's RTL, read by
# `cargo xtask synth` (Yosys) and by fpga/build.tcl (Vivado). One path a line, relative to the
# workspace root; the include folder hdl/include holds the generated register map.
hdl/rtl/card_core.v
hdl/rtl/card_regfile.v
hdl/rtl/axil_reg_if.v
hdl/rtl/axis_skid_buffer.v
hdl/rtl/frame_source.v
hdl/rtl/frame_source_fifo.v
hdl/rtl/frame_prbs31.v
hdl/rtl/frame_crc32.v
hdl/rtl/frame_checker.v
hdl/rtl/capture_writer.v
hdl/rtl/axi_mm_path.v
hdl/rtl/axi_wr_arbiter.v
hdl/rtl/axi_wr_upsizer.v
hdl/rtl/axi_rd_upsizer.v
hdl/rtl/axi_cdc_wr.v
hdl/rtl/axi_cdc_rd.v
hdl/rtl/async_fifo.v
