# Vivado non-project flow for the card:
#
#   vivado -mode batch -source fpga/build.tcl -tclargs mm|stream [part] [board_part]
#
# Builds the block design around card_core (XDMA PCIe Gen2 x8 with a 128-bit AXI at 250 MHz;
# for mm also the MIG DDR3 controller at 800 MHz, 4:1, 512-bit AXI on its 200 MHz ui_clk),
# synthesizes, places and routes it and writes fpga/out/<variant>/card.bit with the timing and
# utilisation reports beside it. card_core's RTL comes from fpga/card_core.f, the file list
# that `cargo xtask synth` reads too. Run it from the workspace root.

set variant [lindex $argv 0]
set part [expr {[llength $argv] > 1 ? [lindex $argv 1] : "xc7k325tffg900-2"}]
set board [expr {[llength $argv] > 2 ? [lindex $argv 2] : "xilinx.com:kc705:part0:1.6"}]

# card_core's VARIANT for each build, and the XDMA channel layout it needs.
array set variant_value {mm 1 stream 2}
if {![info exists variant_value($variant)]} {
    puts stderr "usage: vivado -mode batch -source fpga/build.tcl -tclargs mm|stream \[part\] \[board_part\]"
    puts stderr "unknown variant '$variant': the card is built memory-mapped (mm) or stream (stream)"
    exit 1
}
set root [file normalize [file join [file dirname [info script]] ..]]
# Outputs go to fpga/out/<variant>, or where CARD_FPGA_OUT says.
if {[info exists ::env(CARD_FPGA_OUT)]} {
    set out $::env(CARD_FPGA_OUT)
} else {
    set out [file join $root fpga out $variant]
}
file mkdir $out

# The RTL: one path a line in fpga/card_core.f, '#' starts a comment.
proc read_file_list {root list} {
    set files {}
    set f [open [file join $root $list] r]
    foreach line [split [read $f] "\n"] {
        set line [string trim [lindex [split $line "#"] 0]]
        if {$line ne ""} {
            lappend files [file join $root $line]
        }
    }
    close $f
    return $files
}

create_project -in_memory -part $part
if {$board ne ""} {
    set_property board_part $board [current_project]
}
set rtl [read_file_list $root fpga/card_core.f]
read_verilog $rtl
set_property include_dirs [list [file join $root hdl include]] [current_fileset]
update_compile_order -fileset sources_1

# ------------------------------------------------------------------ block design
create_bd_design card

# PCIe reference clock (100 MHz) and PERST#.
create_bd_port -dir I -type clk -freq_hz 100000000 pcie_refclk_p
create_bd_port -dir I -type clk -freq_hz 100000000 pcie_refclk_n
create_bd_port -dir I -type rst pcie_perst_n
set refclk_buf [create_bd_cell -type ip -vlnv xilinx.com:ip:util_ds_buf refclk_buf]
set_property -dict [list CONFIG.C_BUF_TYPE {IBUFDSGTE}] $refclk_buf
connect_bd_net [get_bd_ports pcie_refclk_p] [get_bd_pins refclk_buf/IBUF_DS_P]
connect_bd_net [get_bd_ports pcie_refclk_n] [get_bd_pins refclk_buf/IBUF_DS_N]

# XDMA: Gen2 x8, 128-bit AXI at 250 MHz, one user interrupt, the user BAR as AXI4-Lite
# (64 KiB: card_core's AXIL_ADDR_WIDTH of 16). One instance is memory-mapped or stream for
# all its channels: mm has one H2C and one C2H memory-mapped channel, stream one H2C and two
# C2H stream channels.
set xdma [create_bd_cell -type ip -vlnv xilinx.com:ip:xdma xdma]
set xdma_cfg [list \
    CONFIG.mode_selection {Advanced} \
    CONFIG.pl_link_cap_max_link_width {X8} \
    CONFIG.pl_link_cap_max_link_speed {5.0_GT/s} \
    CONFIG.axi_data_width {128_bit} \
    CONFIG.axisten_freq {250} \
    CONFIG.axi_id_width {4} \
    CONFIG.xdma_num_usr_irq {1} \
    CONFIG.axilite_master_en {true} \
    CONFIG.axilite_master_size {64} \
    CONFIG.axilite_master_scale {Kilobytes} \
    CONFIG.xdma_rnum_chnl {1}]
if {$variant eq "mm"} {
    lappend xdma_cfg CONFIG.xdma_axi_intf_mm {AXI_Memory_Mapped} CONFIG.xdma_wnum_chnl {1}
} else {
    lappend xdma_cfg CONFIG.xdma_axi_intf_mm {AXI_Stream} CONFIG.xdma_wnum_chnl {2}
}
set_property -dict $xdma_cfg $xdma
connect_bd_net [get_bd_pins refclk_buf/IBUF_OUT] [get_bd_pins xdma/sys_clk]
connect_bd_net [get_bd_ports pcie_perst_n] [get_bd_pins xdma/sys_rst_n]
make_bd_intf_pins_external -name pcie_mgt [get_bd_intf_pins xdma/pcie_mgt]

# card_core, from the RTL read above.
set core [create_bd_cell -type module -reference card_core card_core]
set_property -dict [list CONFIG.VARIANT $variant_value($variant)] $core
connect_bd_net [get_bd_pins xdma/axi_aclk] [get_bd_pins card_core/axi_aclk]
connect_bd_net [get_bd_pins xdma/axi_aresetn] [get_bd_pins card_core/axi_aresetn]
connect_bd_intf_net [get_bd_intf_pins xdma/M_AXI_LITE] [get_bd_intf_pins card_core/s_axil]
connect_bd_net [get_bd_pins card_core/usr_irq_req] [get_bd_pins xdma/usr_irq_req]
connect_bd_net [get_bd_pins xdma/usr_irq_ack] [get_bd_pins card_core/usr_irq_ack]
# The simulated card's deliberate faults (card_core's FAULT_*) are not built here; their
# run-time enables are tied low all the same, so that no input of card_core is left open.
set no_fault [create_bd_cell -type ip -vlnv xilinx.com:ip:xlconstant no_fault]
set_property -dict [list CONFIG.CONST_VAL {0}] $no_fault
connect_bd_net [get_bd_pins no_fault/dout] [get_bd_pins card_core/fault_rd_drop_beat_en] \
    [get_bd_pins card_core/fault_seq_repeat_en]

if {$variant eq "mm"} {
    connect_bd_intf_net [get_bd_intf_pins xdma/M_AXI] [get_bd_intf_pins card_core/s_axi]

    # MIG: the board's 2 GB DDR3 SODIMM at 800 MHz (DDR3-1600), 4:1, a 512-bit AXI port on
    # ui_clk (200 MHz), from the board's memory interface (pins, timing, system clock).
    set mig [create_bd_cell -type ip -vlnv xilinx.com:ip:mig_7series mig]
    apply_bd_automation -rule xilinx.com:bd_rule:mig_7series \
        -config {Board_Interface "ddr3_sdram"} $mig
    create_bd_port -dir I -type rst cpu_reset
    connect_bd_net [get_bd_ports cpu_reset] [get_bd_pins mig/sys_rst]
    connect_bd_intf_net [get_bd_intf_pins card_core/m_axi_ddr] [get_bd_intf_pins mig/S_AXI]
    connect_bd_net [get_bd_pins mig/ui_clk] [get_bd_pins card_core/ddr_clk]
    connect_bd_net [get_bd_pins mig/ui_clk_sync_rst] [get_bd_pins card_core/ddr_rst]
    # The MIG's AXI reset: its ui_clk reset, held until calibration is done.
    set ddr_reset [create_bd_cell -type ip -vlnv xilinx.com:ip:proc_sys_reset ddr_reset]
    connect_bd_net [get_bd_pins mig/ui_clk] [get_bd_pins ddr_reset/slowest_sync_clk]
    connect_bd_net [get_bd_pins mig/ui_clk_sync_rst] [get_bd_pins ddr_reset/ext_reset_in]
    connect_bd_net [get_bd_pins mig/mmcm_locked] [get_bd_pins ddr_reset/dcm_locked]
    connect_bd_net [get_bd_pins ddr_reset/peripheral_aresetn] [get_bd_pins mig/aresetn]
} else {
    connect_bd_intf_net [get_bd_intf_pins xdma/M_AXIS_H2C_0] [get_bd_intf_pins card_core/s_axis_h2c0]
    connect_bd_intf_net [get_bd_intf_pins card_core/m_axis_c2h0] [get_bd_intf_pins xdma/S_AXIS_C2H_0]
    connect_bd_intf_net [get_bd_intf_pins card_core/m_axis_c2h1] [get_bd_intf_pins xdma/S_AXIS_C2H_1]
    # No DDR in this variant: card_core's DDR side idles on the AXI clock.
    connect_bd_net [get_bd_pins xdma/axi_aclk] [get_bd_pins card_core/ddr_clk]
    set no_ddr [create_bd_cell -type ip -vlnv xilinx.com:ip:xlconstant no_ddr_rst]
    set_property -dict [list CONFIG.CONST_VAL {1}] $no_ddr
    connect_bd_net [get_bd_pins no_ddr_rst/dout] [get_bd_pins card_core/ddr_rst]
}

assign_bd_address
validate_bd_design
save_bd_design
set bd_file [get_files card.bd]
generate_target all $bd_file
set wrapper [make_wrapper -files $bd_file -top]
read_verilog $wrapper

# ------------------------------------------------------------------ constraints, implementation
read_xdc [file join $root fpga kc705.xdc]
read_xdc -ref card_core [file join $root fpga card_core.xdc]

synth_design -top card_wrapper -part $part
opt_design
place_design
phys_opt_design
route_design
report_timing_summary -file [file join $out timing.rpt]
report_utilization -file [file join $out utilization.rpt]
report_cdc -file [file join $out cdc.rpt]
write_bitstream -force [file join $out card.bit]
