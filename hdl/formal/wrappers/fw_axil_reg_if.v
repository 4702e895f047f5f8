/*
 * Proof wrapper of axil_reg_if: its AXI4-Lite port is checked as a slave (the master's rules
 * assumed, the B and R rules asserted), and it keeps what it promises: one write and one read
 * in progress at a time; a write reaches the register bus once, with the address of its AW and
 * the data and strobes of its W, before its response, which is SLVERR exactly when the decoder
 * refused it; a read strobes reg_rd_en once with the address of its AR and answers with what the
 * decoder gave RD_LATENCY cycles later; no response without its request.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axil_reg_if #
(
    // Width of the register data bus in bits
    parameter DATA_WIDTH = 32,
    // Width of the byte address in bits (narrow, so that the solver's state stays small)
    parameter ADDR_WIDTH = 4,
    // Cycles from reg_rd_en to the cycle reg_rd_data is taken in
    parameter RD_LATENCY = 2
)
(
    input  wire                     clk,
    input  wire                     rst,
    input  wire [ADDR_WIDTH-1:0]    s_axil_awaddr,
    input  wire [2:0]               s_axil_awprot,
    input  wire                     s_axil_awvalid,
    input  wire [DATA_WIDTH-1:0]    s_axil_wdata,
    input  wire [DATA_WIDTH/8-1:0]  s_axil_wstrb,
    input  wire                     s_axil_wvalid,
    input  wire                     s_axil_bready,
    input  wire [ADDR_WIDTH-1:0]    s_axil_araddr,
    input  wire [2:0]               s_axil_arprot,
    input  wire                     s_axil_arvalid,
    input  wire                     s_axil_rready,
    input  wire [DATA_WIDTH-1:0]    reg_rd_data,
    input  wire                     reg_wr_err
);

`ifdef FORMAL

    localparam STRB_WIDTH = DATA_WIDTH/8;

    wire                  s_axil_awready;
    wire                  s_axil_wready;
    wire [1:0]            s_axil_bresp;
    wire                  s_axil_bvalid;
    wire                  s_axil_arready;
    wire [DATA_WIDTH-1:0] s_axil_rdata;
    wire [1:0]            s_axil_rresp;
    wire                  s_axil_rvalid;
    wire [ADDR_WIDTH-1:0] reg_wr_addr;
    wire [DATA_WIDTH-1:0] reg_wr_data;
    wire [STRB_WIDTH-1:0] reg_wr_strb;
    wire                  reg_wr_en;
    wire [ADDR_WIDTH-1:0] reg_rd_addr;
    wire                  reg_rd_en;

    axil_reg_if #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .STRB_WIDTH(STRB_WIDTH),
        .RD_LATENCY(RD_LATENCY)
    ) dut (
        .clk(clk),
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
        .reg_rd_data(reg_rd_data),
        .reg_wr_err(reg_wr_err)
    );

    faxil_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH)
    ) f_bus (
        .clk(clk),
        .rst(rst),
        .awaddr(s_axil_awaddr),
        .awprot(s_axil_awprot),
        .awvalid(s_axil_awvalid),
        .awready(s_axil_awready),
        .wdata(s_axil_wdata),
        .wstrb(s_axil_wstrb),
        .wvalid(s_axil_wvalid),
        .wready(s_axil_wready),
        .bresp(s_axil_bresp),
        .bvalid(s_axil_bvalid),
        .bready(s_axil_bready),
        .araddr(s_axil_araddr),
        .arprot(s_axil_arprot),
        .arvalid(s_axil_arvalid),
        .arready(s_axil_arready),
        .rdata(s_axil_rdata),
        .rresp(s_axil_rresp),
        .rvalid(s_axil_rvalid),
        .rready(s_axil_rready)
    );

    // The write and read in progress, as the bus shows them: how many AWs, Ws and ARs were
    // taken and not yet answered, what they carried, whether the register bus saw the write,
    // and the response it earned; the cycles since reg_rd_en and the data taken then.
    reg [1:0] f_aw = 2'd0;
    reg [1:0] f_w = 2'd0;
    reg [1:0] f_ar = 2'd0;
    reg f_written = 1'b0;
    reg f_refused = 1'b0;
    reg f_strobed = 1'b0;
    reg [ADDR_WIDTH-1:0] f_awaddr = {ADDR_WIDTH{1'b0}};
    reg [DATA_WIDTH-1:0] f_wdata = {DATA_WIDTH{1'b0}};
    reg [STRB_WIDTH-1:0] f_wstrb = {STRB_WIDTH{1'b0}};
    reg [ADDR_WIDTH-1:0] f_araddr = {ADDR_WIDTH{1'b0}};
    reg [3:0] f_since_rd = 4'd0;
    reg [DATA_WIDTH-1:0] f_rdata = {DATA_WIDTH{1'b0}};

    wire f_aw_fire = s_axil_awvalid && s_axil_awready;
    wire f_w_fire = s_axil_wvalid && s_axil_wready;
    wire f_b_fire = s_axil_bvalid && s_axil_bready;
    wire f_ar_fire = s_axil_arvalid && s_axil_arready;
    wire f_r_fire = s_axil_rvalid && s_axil_rready;

    always @(posedge clk) begin
        if (rst) begin
            f_aw <= 2'd0;
            f_w <= 2'd0;
            f_ar <= 2'd0;
            f_written <= 1'b0;
            f_strobed <= 1'b0;
            f_since_rd <= 4'd0;
        end else begin
            f_aw <= f_aw + f_aw_fire - f_b_fire;
            f_w <= f_w + f_w_fire - f_b_fire;
            f_ar <= f_ar + f_ar_fire - f_r_fire;
            if (f_aw_fire) f_awaddr <= s_axil_awaddr;
            if (f_w_fire) begin
                f_wdata <= s_axil_wdata;
                f_wstrb <= s_axil_wstrb;
            end
            if (reg_wr_en) begin
                f_written <= 1'b1;
                f_refused <= reg_wr_err;
            end
            if (f_b_fire) f_written <= 1'b0;
            if (f_ar_fire) f_araddr <= s_axil_araddr;
            if (reg_rd_en) begin
                f_strobed <= 1'b1;
                f_since_rd <= 4'd1;
            end else if (f_since_rd != 4'd0 && f_since_rd != 4'd15) begin
                f_since_rd <= f_since_rd + 4'd1;
            end
            if (f_since_rd == RD_LATENCY) f_rdata <= reg_rd_data;
            if (f_r_fire) begin
                f_strobed <= 1'b0;
                f_since_rd <= 4'd0;
            end
        end
    end

    reg f_past_valid = 1'b0;
    reg [1:0] f_reads_done = 2'd0;  // reads answered since reset, up to 3

    always @(posedge clk) begin
        f_past_valid <= 1'b1;
        if (rst) begin
            f_reads_done <= 2'd0;
        end else if (f_r_fire && f_reads_done != 2'd3) begin
            f_reads_done <= f_reads_done + 2'd1;
        end
    end

    always @(*) begin
        if (f_past_valid && !rst) begin
            promise_one_write: assert (f_aw <= 2'd1 && f_w <= 2'd1);
            promise_one_read: assert (f_ar <= 2'd1);
            promise_no_b_without_request: assert (!s_axil_bvalid || (f_aw == 2'd1 && f_w == 2'd1 && f_written));
            promise_write_once: assert (!reg_wr_en || (f_aw == 2'd1 && f_w == 2'd1 && !f_written));
            promise_write_carries_request: assert (!reg_wr_en || (reg_wr_addr == f_awaddr && reg_wr_data == f_wdata && reg_wr_strb == f_wstrb));
            promise_bresp: assert (!s_axil_bvalid || s_axil_bresp == (f_refused ? 2'b10 : 2'b00));
            promise_no_r_without_request: assert (!s_axil_rvalid || (f_ar == 2'd1 && f_strobed));
            promise_read_once: assert (!reg_rd_en || (f_ar == 2'd1 && !f_strobed));
            promise_read_address: assert (!f_strobed || reg_rd_addr == f_araddr);
            promise_read_data: assert (!s_axil_rvalid || (s_axil_rdata == f_rdata && s_axil_rresp == 2'b00));
        end
    end

    always @(posedge clk) begin
        if (f_past_valid && !rst) begin
            cover_write_completes: cover (f_b_fire && s_axil_bresp == 2'b10);
            // A second read completes (reads cannot end four cycles apart, as this cover
            // once asked: the interface takes one read at a time, RD_LATENCY cycles each).
            cover_read_completes: cover (f_r_fire && f_reads_done == 2'd1);
            cover_stall: cover (s_axil_bvalid && !s_axil_bready && s_axil_rvalid && !s_axil_rready);
            cover_reset_mid_write: cover ($past(rst) && $past(f_aw == 2'd1 && !f_written, 2));
        end
    end

`endif

endmodule

`resetall
