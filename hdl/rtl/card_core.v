/*
 * The card's user logic as it sits beside the XDMA IP.
 *
 * For now it holds the register file on the user BAR (AXI4-Lite): an identifier, a version
 * and a scratch register. The register map is in docs/register-map.md.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module card_core #
(
    // Width of the user BAR byte address in bits (the BAR is 2**AXIL_ADDR_WIDTH bytes)
    parameter AXIL_ADDR_WIDTH = 16,
    // Value of the read-only identifier register: ASCII "DAQ1"
    parameter [31:0] CARD_ID = 32'h4441_5131,
    // Value of the read-only version register: major in [31:16], minor in [15:0]
    parameter [31:0] CARD_VERSION = 32'h0000_0001
)
(
    input  wire                        axi_aclk,
    input  wire                        axi_aresetn,

    /*
     * AXI4-Lite slave: the user BAR
     */
    input  wire [AXIL_ADDR_WIDTH-1:0]  s_axil_awaddr,
    input  wire [2:0]                  s_axil_awprot,
    input  wire                        s_axil_awvalid,
    output wire                        s_axil_awready,
    input  wire [31:0]                 s_axil_wdata,
    input  wire [3:0]                  s_axil_wstrb,
    input  wire                        s_axil_wvalid,
    output wire                        s_axil_wready,
    output wire [1:0]                  s_axil_bresp,
    output wire                        s_axil_bvalid,
    input  wire                        s_axil_bready,
    input  wire [AXIL_ADDR_WIDTH-1:0]  s_axil_araddr,
    input  wire [2:0]                  s_axil_arprot,
    input  wire                        s_axil_arvalid,
    output wire                        s_axil_arready,
    output wire [31:0]                 s_axil_rdata,
    output wire [1:0]                  s_axil_rresp,
    output wire                        s_axil_rvalid,
    input  wire                        s_axil_rready
);

// Register offsets (bytes)
localparam [AXIL_ADDR_WIDTH-1:0]
    REG_ID      = 'h000,
    REG_VERSION = 'h004,
    REG_SCRATCH = 'h008;

// check configuration
initial begin
    if (AXIL_ADDR_WIDTH < 12) begin
        $error("Error: the user BAR needs at least 4 KiB, AXIL_ADDR_WIDTH >= 12 (instance %m)");
        $finish;
    end
end

// The XDMA IP gives an active-low reset synchronous to axi_aclk.
wire rst = !axi_aresetn;

wire [AXIL_ADDR_WIDTH-1:0] reg_wr_addr;
wire [31:0] reg_wr_data;
wire [3:0] reg_wr_strb;
wire reg_wr_en;
wire [AXIL_ADDR_WIDTH-1:0] reg_rd_addr;
wire reg_rd_en;
reg [31:0] reg_rd_data;

reg [31:0] scratch_reg = 32'd0;

axil_reg_if #(
    .DATA_WIDTH(32),
    .ADDR_WIDTH(AXIL_ADDR_WIDTH)
)
axil_reg_if_inst (
    .clk(axi_aclk),
    .rst(rst),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .reg_wr_addr(reg_wr_addr),
    .reg_wr_data(reg_wr_data),
    .reg_wr_strb(reg_wr_strb),
    .reg_wr_en(reg_wr_en),
    .reg_rd_addr(reg_rd_addr),
    .reg_rd_en(reg_rd_en),
    .reg_rd_data(reg_rd_data)
);

// Reads decode the word address; unmapped words read as zero so that a probe of the BAR
// never produces an error completion on the PCIe side.
always @* begin
    case ({reg_rd_addr[AXIL_ADDR_WIDTH-1:2], 2'b00})
        REG_ID:      reg_rd_data = CARD_ID;
        REG_VERSION: reg_rd_data = CARD_VERSION;
        REG_SCRATCH: reg_rd_data = scratch_reg;
        default:     reg_rd_data = 32'd0;
    endcase
end

integer i;

always @(posedge axi_aclk) begin
    if (reg_wr_en && {reg_wr_addr[AXIL_ADDR_WIDTH-1:2], 2'b00} == REG_SCRATCH) begin
        for (i = 0; i < 4; i = i + 1) begin
            if (reg_wr_strb[i]) begin
                scratch_reg[8*i +: 8] <= reg_wr_data[8*i +: 8];
            end
        end
    end

    if (rst) begin
        scratch_reg <= 32'd0;
    end
end

// The read strobe is not needed: every register here reads without side effects. Byte
// offsets within a word are ignored: the registers are accessed as whole words.
wire [4:0] unused_reg = {reg_rd_en, reg_rd_addr[1:0], reg_wr_addr[1:0]};

endmodule

`resetall
