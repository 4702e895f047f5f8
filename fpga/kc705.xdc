# Board constraints of the reference board (a KC705-like XC7K325T-2FFG900C card): the ports
# that fpga/build.tcl creates itself. The DDR3 pins and the MIG's 200 MHz system clock come with
# the board's memory interface (board part xilinx.com:kc705:part0, interface ddr3_sdram) and the
# PCIe lanes with the XDMA IP's GT placement; a board other than the KC705 needs its own pins
# here and its own MIG pin-out.

# PCIe reference clock, 100 MHz from the edge connector (GTX quad 115, MGTREFCLK0).
set_property PACKAGE_PIN U8 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN U7 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]

# PERST# from the edge connector, active low, asynchronous to everything on the card.
set_property PACKAGE_PIN G25 [get_ports pcie_perst_n]
set_property IOSTANDARD LVCMOS25 [get_ports pcie_perst_n]
set_property PULLUP true [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# The board's CPU_RESET push button, active high: the MIG's system reset (mm builds only).
set_property PACKAGE_PIN AB7 [get_ports -quiet cpu_reset]
set_property IOSTANDARD LVCMOS15 [get_ports -quiet cpu_reset]
set_false_path -from [get_ports -quiet cpu_reset]

# Configuration: bank voltage and the flash the bitstream is written for.
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
