/*
 * AXI4-Lite slave to a simple register bus.
 *
 * Accepts AW and W in either order, one write and one read in progress at a time, and turns
 * them into single-cycle strobes for a register decoder:
 *   - reg_wr_en pulses for one cycle with reg_wr_addr/data/strb;
 *   - reg_rd_en pulses for one cycle with reg_rd_addr, which stays until the read's response
 *     has been taken; reg_rd_data is taken RD_LATENCY cycles later, so the decoder may
 *     register its answer (card_regfile's read multiplexer takes three registered steps);
 *   - reg_wr_err, sampled in the cycle of reg_wr_en, turns the write's response into SLVERR
 *     (the decoder refused the write).
 * Every AXI-Lite output comes from a register.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axil_reg_if #
(
    // Width of the register data bus in bits (AXI4-Lite allows 32 or 64)
    parameter DATA_WIDTH = 32,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 16,
    // Width of the write strobe (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Cycles from reg_rd_en to the cycle reg_rd_data is taken in (1 to 4)
    parameter RD_LATENCY = 2
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI4-Lite slave
     */
    input  wire [ADDR_WIDTH-1:0]  s_axil_awaddr,
    input  wire [2:0]             s_axil_awprot,
    input  wire                   s_axil_awvalid,
    output wire                   s_axil_awready,
    input  wire [DATA_WIDTH-1:0]  s_axil_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axil_wstrb,
    input  wire                   s_axil_wvalid,
    output wire                   s_axil_wready,
    output wire [1:0]             s_axil_bresp,
    output wire                   s_axil_bvalid,
    input  wire                   s_axil_bready,
    input  wire [ADDR_WIDTH-1:0]  s_axil_araddr,
    input  wire [2:0]             s_axil_arprot,
    input  wire                   s_axil_arvalid,
    output wire                   s_axil_arready,
    output wire [DATA_WIDTH-1:0]  s_axil_rdata,
    output wire [1:0]             s_axil_rresp,
    output wire                   s_axil_rvalid,
    input  wire                   s_axil_rready,

    /*
     * Register bus
     */
    output wire [ADDR_WIDTH-1:0]  reg_wr_addr,
    output wire [DATA_WIDTH-1:0]  reg_wr_data,
    output wire [STRB_WIDTH-1:0]  reg_wr_strb,
    output wire                   reg_wr_en,
    output wire [ADDR_WIDTH-1:0]  reg_rd_addr,
    output wire                   reg_rd_en,
    input  wire [DATA_WIDTH-1:0]  reg_rd_data,
    input  wire                   reg_wr_err
);

// AXI response codes
localparam [1:0]
    RESP_OKAY = 2'b00,
    RESP_SLVERR = 2'b10;

// check configuration
initial begin
    if (DATA_WIDTH != 32 && DATA_WIDTH != 64) begin
        $error("Error: AXI-Lite data width must be 32 or 64 (instance %m)");
        $finish;
    end

    if (RD_LATENCY < 1 || RD_LATENCY > 4) begin
        $error("Error: RD_LATENCY must be 1 to 4 (instance %m)");
        $finish;
    end

    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: AXI-Lite strobe width must be data width / 8 (instance %m)");
        $finish;
    end
end

reg aw_held_reg = 1'b0;
reg w_held_reg = 1'b0;
reg bvalid_reg = 1'b0;
reg [1:0] bresp_reg = RESP_OKAY;
reg [ADDR_WIDTH-1:0] wr_addr_reg = {ADDR_WIDTH{1'b0}};
reg [DATA_WIDTH-1:0] wr_data_reg = {DATA_WIDTH{1'b0}};
reg [STRB_WIDTH-1:0] wr_strb_reg = {STRB_WIDTH{1'b0}};
reg wr_en_reg = 1'b0;

reg rd_pending_reg = 1'b0;
reg [3:0] rd_wait_reg = 4'd0;   // reg_rd_en, delayed by 1 to 4 cycles
reg rvalid_reg = 1'b0;
reg [ADDR_WIDTH-1:0] rd_addr_reg = {ADDR_WIDTH{1'b0}};
reg [DATA_WIDTH-1:0] rdata_reg = {DATA_WIDTH{1'b0}};

// Ready depends only on registers, so there is no combinational path from any valid to any
// ready; a held address or data phase waits for its partner and for the previous response.
assign s_axil_awready = !aw_held_reg && !bvalid_reg && !wr_en_reg;
assign s_axil_wready = !w_held_reg && !bvalid_reg && !wr_en_reg;
assign s_axil_bresp = bresp_reg;
assign s_axil_bvalid = bvalid_reg;
assign s_axil_arready = !rd_pending_reg && rd_wait_reg == 4'd0 && !rvalid_reg;
assign s_axil_rdata = rdata_reg;
assign s_axil_rresp = RESP_OKAY;
assign s_axil_rvalid = rvalid_reg;

assign reg_wr_addr = wr_addr_reg;
assign reg_wr_data = wr_data_reg;
assign reg_wr_strb = wr_strb_reg;
assign reg_wr_en = wr_en_reg;
assign reg_rd_addr = rd_addr_reg;
assign reg_rd_en = rd_pending_reg;

always @(posedge clk) begin
    wr_en_reg <= 1'b0;

    if (s_axil_awvalid && s_axil_awready) begin
        aw_held_reg <= 1'b1;
        wr_addr_reg <= s_axil_awaddr;
    end

    if (s_axil_wvalid && s_axil_wready) begin
        w_held_reg <= 1'b1;
        wr_data_reg <= s_axil_wdata;
        wr_strb_reg <= s_axil_wstrb;
    end

    if (aw_held_reg && w_held_reg) begin
        // The decoder sees the write in the next cycle; the response follows it.
        aw_held_reg <= 1'b0;
        w_held_reg <= 1'b0;
        wr_en_reg <= 1'b1;
    end

    if (wr_en_reg) begin
        bvalid_reg <= 1'b1;
        bresp_reg <= reg_wr_err ? RESP_SLVERR : RESP_OKAY;
    end else if (s_axil_bready) begin
        bvalid_reg <= 1'b0;
    end

    if (s_axil_arvalid && s_axil_arready) begin
        rd_addr_reg <= s_axil_araddr;
        rd_pending_reg <= 1'b1;
    end

    // reg_rd_en for a cycle, then the decoder's registered answer a cycle later.
    rd_wait_reg <= {rd_wait_reg[2:0], rd_pending_reg};
    if (rd_pending_reg) begin
        rd_pending_reg <= 1'b0;
    end
    if (rd_wait_reg[RD_LATENCY-1]) begin
        rdata_reg <= reg_rd_data;
        rvalid_reg <= 1'b1;
    end else if (s_axil_rready) begin
        rvalid_reg <= 1'b0;
    end

    if (rst) begin
        aw_held_reg <= 1'b0;
        w_held_reg <= 1'b0;
        bvalid_reg <= 1'b0;
        wr_en_reg <= 1'b0;
        rd_pending_reg <= 1'b0;
        rd_wait_reg <= 4'd0;
        rvalid_reg <= 1'b0;
    end
end

// The protection attributes carry nothing this register file acts on.
wire [5:0] unused_prot = {s_axil_awprot, s_axil_arprot};

endmodule

`resetall
