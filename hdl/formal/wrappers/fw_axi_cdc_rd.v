/*
 * Proof wrapper of axi_cdc_rd, with two free clocks as in fw_async_fifo (s_clk toggles at every
 * step of the solver, m_clk at any steps the solver picks, so every ratio and phase is tried;
 * each side's inputs change only at its own clock's rising edge). The slave port is checked as
 * an AXI4 slave under s_rst, the master port as a master under m_rst; neither has write
 * channels, which are tied idle.
 *
 * Assumed of the two neighbours: the master on the slave port asks for bursts of one or two
 * beats; the memory controller on the master port sends read beats only for requests it has
 * taken, no more than each asked for. Resets come
 * whenever the solver likes, on either side.
 *
 * What the bridge promises (its header comment), as long as neither side was reset again after
 * the first reset: every request taken on the slave port appears on the master port once, in
 * order, with the same ID, address, length and attributes; every read beat taken on the master
 * port returns on the slave port once, in order, with its ID, data, response and RLAST. And
 * until the master side itself is reset again, whatever the slave side does: the bridge never
 * takes more beats than the requests it issued asked for, so the beats a reset of the slave
 * side leaves owed are taken and dropped, never handed to a request made after it (a cover
 * shows such beats drained). Order is checked by data independence: one request and one beat
 * of the solver's choice is recorded as it is taken and compared where it comes out.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_axi_cdc_rd #
(
    // Width of the data bus in bits (one byte, so that the solver's state stays small)
    parameter DATA_WIDTH = 8,
    // Width of the byte address in bits (the least the property modules take)
    parameter ADDR_WIDTH = 12,
    // Width of the ID
    parameter ID_WIDTH = 1,
    // log2 of the FIFO depths (the smallest async_fifo allows)
    parameter AR_FIFO_ADDR_WIDTH = 2,
    parameter R_FIFO_ADDR_WIDTH = 2
)
(
    input  wire                   s_clk,
    input  wire                   s_rst,
    input  wire [ID_WIDTH-1:0]    s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_araddr,
    input  wire [7:0]             s_axi_arlen,
    input  wire [2:0]             s_axi_arsize,
    input  wire [1:0]             s_axi_arburst,
    input  wire                   s_axi_arlock,
    input  wire [3:0]             s_axi_arcache,
    input  wire [2:0]             s_axi_arprot,
    input  wire                   s_axi_arvalid,
    input  wire                   s_axi_rready,
    input  wire                   m_clk,
    input  wire                   m_rst,
    input  wire                   m_axi_arready,
    input  wire [ID_WIDTH-1:0]    m_axi_rid,
    input  wire [DATA_WIDTH-1:0]  m_axi_rdata,
    input  wire [1:0]             m_axi_rresp,
    input  wire                   m_axi_rlast,
    input  wire                   m_axi_rvalid
);

`ifdef FORMAL

    wire                   s_axi_arready;
    wire [ID_WIDTH-1:0]    s_axi_rid;
    wire [DATA_WIDTH-1:0]  s_axi_rdata;
    wire [1:0]             s_axi_rresp;
    wire                   s_axi_rlast;
    wire                   s_axi_rvalid;
    wire [ID_WIDTH-1:0]    m_axi_arid;
    wire [ADDR_WIDTH-1:0]  m_axi_araddr;
    wire [7:0]             m_axi_arlen;
    wire [2:0]             m_axi_arsize;
    wire [1:0]             m_axi_arburst;
    wire                   m_axi_arlock;
    wire [3:0]             m_axi_arcache;
    wire [2:0]             m_axi_arprot;
    wire                   m_axi_arvalid;
    wire                   m_axi_rready;

    axi_cdc_rd #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH),
        .AR_FIFO_ADDR_WIDTH(AR_FIFO_ADDR_WIDTH),
        .R_FIFO_ADDR_WIDTH(R_FIFO_ADDR_WIDTH)
    ) dut (
        .s_clk(s_clk),
        .s_rst(s_rst),
        .s_axi_arid(s_axi_arid),
        .s_axi_araddr(s_axi_araddr),
        .s_axi_arlen(s_axi_arlen),
        .s_axi_arsize(s_axi_arsize),
        .s_axi_arburst(s_axi_arburst),
        .s_axi_arlock(s_axi_arlock),
        .s_axi_arcache(s_axi_arcache),
        .s_axi_arprot(s_axi_arprot),
        .s_axi_arvalid(s_axi_arvalid),
        .s_axi_arready(s_axi_arready),
        .s_axi_rid(s_axi_rid),
        .s_axi_rdata(s_axi_rdata),
        .s_axi_rresp(s_axi_rresp),
        .s_axi_rlast(s_axi_rlast),
        .s_axi_rvalid(s_axi_rvalid),
        .s_axi_rready(s_axi_rready),
        .m_clk(m_clk),
        .m_rst(m_rst),
        .m_axi_arid(m_axi_arid),
        .m_axi_araddr(m_axi_araddr),
        .m_axi_arlen(m_axi_arlen),
        .m_axi_arsize(m_axi_arsize),
        .m_axi_arburst(m_axi_arburst),
        .m_axi_arlock(m_axi_arlock),
        .m_axi_arcache(m_axi_arcache),
        .m_axi_arprot(m_axi_arprot),
        .m_axi_arvalid(m_axi_arvalid),
        .m_axi_arready(m_axi_arready),
        .m_axi_rid(m_axi_rid),
        .m_axi_rdata(m_axi_rdata),
        .m_axi_rresp(m_axi_rresp),
        .m_axi_rlast(m_axi_rlast),
        .m_axi_rvalid(m_axi_rvalid),
        .m_axi_rready(m_axi_rready)
    );

    faxi_slave #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_in (
        .clk(s_clk),
        .rst(s_rst),
        .awid({ID_WIDTH{1'b0}}),
        .awaddr({ADDR_WIDTH{1'b0}}),
        .awlen(8'd0),
        .awsize(3'd0),
        .awburst(2'b01),
        .awvalid(1'b0),
        .awready(1'b0),
        .wdata({DATA_WIDTH{1'b0}}),
        .wstrb({(DATA_WIDTH/8){1'b0}}),
        .wlast(1'b0),
        .wvalid(1'b0),
        .wready(1'b0),
        .bid({ID_WIDTH{1'b0}}),
        .bresp(2'b00),
        .bvalid(1'b0),
        .bready(1'b0),
        .arid(s_axi_arid),
        .araddr(s_axi_araddr),
        .arlen(s_axi_arlen),
        .arsize(s_axi_arsize),
        .arburst(s_axi_arburst),
        .arvalid(s_axi_arvalid),
        .arready(s_axi_arready),
        .rid(s_axi_rid),
        .rdata(s_axi_rdata),
        .rresp(s_axi_rresp),
        .rlast(s_axi_rlast),
        .rvalid(s_axi_rvalid),
        .rready(s_axi_rready)
    );

    faxi_master #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .ID_WIDTH(ID_WIDTH)
    ) f_out (
        .clk(m_clk),
        .rst(m_rst),
        .awid({ID_WIDTH{1'b0}}),
        .awaddr({ADDR_WIDTH{1'b0}}),
        .awlen(8'd0),
        .awsize(3'd0),
        .awburst(2'b01),
        .awvalid(1'b0),
        .awready(1'b0),
        .wdata({DATA_WIDTH{1'b0}}),
        .wstrb({(DATA_WIDTH/8){1'b0}}),
        .wlast(1'b0),
        .wvalid(1'b0),
        .wready(1'b0),
        .bid({ID_WIDTH{1'b0}}),
        .bresp(2'b00),
        .bvalid(1'b0),
        .bready(1'b0),
        .arid(m_axi_arid),
        .araddr(m_axi_araddr),
        .arlen(m_axi_arlen),
        .arsize(m_axi_arsize),
        .arburst(m_axi_arburst),
        .arvalid(m_axi_arvalid),
        .arready(m_axi_arready),
        .rid(m_axi_rid),
        .rdata(m_axi_rdata),
        .rresp(m_axi_rresp),
        .rlast(m_axi_rlast),
        .rvalid(m_axi_rvalid),
        .rready(m_axi_rready)
    );

    // The solver's own step: the clocks and each side's inputs are constrained against it.
    // A simulation has no such step (a replay drives the clocks and inputs from a trace
    // that already keeps these assumptions), and Verilator has no `$global_clock`.
`ifndef VERILATOR
    reg f_gpast = 1'b0;

    always @($global_clock) begin
        f_gpast <= 1'b1;
        if (f_gpast) begin
            assume (s_clk == !$past(s_clk));
            if (!$rose(s_clk)) begin
                assume ($stable(s_rst) && $stable(s_axi_arvalid) && $stable(s_axi_arid)
                    && $stable(s_axi_araddr) && $stable(s_axi_arlen) && $stable(s_axi_arsize)
                    && $stable(s_axi_arburst) && $stable(s_axi_arlock) && $stable(s_axi_arcache)
                    && $stable(s_axi_arprot) && $stable(s_axi_rready));
            end
            if (!$rose(m_clk)) begin
                assume ($stable(m_rst) && $stable(m_axi_arready) && $stable(m_axi_rvalid)
                    && $stable(m_axi_rid) && $stable(m_axi_rdata) && $stable(m_axi_rresp)
                    && $stable(m_axi_rlast));
            end
        end
    end
`endif

    wire f_s_ar = s_axi_arvalid && s_axi_arready;
    wire f_s_r = s_axi_rvalid && s_axi_rready;
    wire f_m_ar = m_axi_arvalid && m_axi_arready;
    wire f_m_r = m_axi_rvalid && m_axi_rready;

    // Whether a side was reset again after the first reset (then what was in flight is
    // discarded, by design).
    reg f_s_ran = 1'b0;
    reg f_m_ran = 1'b0;
    reg f_s_reset_again = 1'b0;
    reg f_m_reset_again = 1'b0;

    always @(posedge s_clk) begin
        if (s_rst && f_s_ran) f_s_reset_again <= 1'b1;
        if (!s_rst) f_s_ran <= 1'b1;
    end

    always @(posedge m_clk) begin
        if (m_rst && f_m_ran) f_m_reset_again <= 1'b1;
        if (!m_rst) f_m_ran <= 1'b1;
    end

    wire f_clean = !f_s_reset_again && !f_m_reset_again && !s_rst && !m_rst;

    // The master on the slave port asks for one or two beats a burst; its counts restart with
    // its reset.
    reg [3:0] f_s_ar_n = 4'd0;      // requests taken on the slave port
    reg [5:0] f_s_r_n = 6'd0;       // beats handed back

    always @(posedge s_clk) begin
        if (s_rst) begin
            f_s_ar_n <= 4'd0;
            f_s_r_n <= 6'd0;
        end else begin
            if (f_s_ar) f_s_ar_n <= f_s_ar_n + 4'd1;
            if (f_s_r) f_s_r_n <= f_s_r_n + 6'd1;
        end
    end

    always @(*) begin
        if (s_axi_arvalid) begin
            assume (s_axi_arlen <= 8'd1);
        end
    end

    /*
     * The memory controller on the master port sends beats only for requests it has taken and
     * no more than they asked for (the rule table's `no_r_without_request` has no formal form;
     * a count of beats owed says it). RLAST is its own business, which the bridge passes on.
     * Its counts restart with its reset, which forgets everything.
     */
    reg [3:0] f_m_ar_n = 4'd0;      // requests issued
    reg [5:0] f_m_r_n = 6'd0;       // beats taken
    reg [5:0] f_m_owed = 6'd0;      // beats asked for and not yet sent

    always @(posedge m_clk) begin
        if (m_rst) begin
            f_m_ar_n <= 4'd0;
            f_m_r_n <= 6'd0;
            f_m_owed <= 6'd0;
        end else begin
            if (f_m_ar) f_m_ar_n <= f_m_ar_n + 4'd1;
            if (f_m_r) f_m_r_n <= f_m_r_n + 6'd1;
            f_m_owed <= f_m_owed + (f_m_ar ? m_axi_arlen[5:0] + 6'd1 : 6'd0)
                - {5'd0, f_m_r};
        end
    end

    always @(*) begin
        if (!m_rst && m_axi_rvalid) begin
            assume (f_m_owed != 6'd0);
        end
    end

    /*
     * Data independence: the request and the beat of the solver's choice, recorded where they
     * are taken.
     */
    localparam AR_BITS = ADDR_WIDTH + ID_WIDTH + 8 + 3 + 2 + 1 + 4 + 3;
    localparam R_BITS = ID_WIDTH + DATA_WIDTH + 2 + 1;

    (* anyconst *) reg [3:0] f_pick_ar;
    (* anyconst *) reg [5:0] f_pick_r;
    reg [AR_BITS-1:0] f_ar_seen = {AR_BITS{1'b0}};
    reg [R_BITS-1:0] f_r_seen = {R_BITS{1'b0}};

    wire [AR_BITS-1:0] f_s_ar_data = {s_axi_arid, s_axi_araddr, s_axi_arlen, s_axi_arsize,
        s_axi_arburst, s_axi_arlock, s_axi_arcache, s_axi_arprot};
    wire [AR_BITS-1:0] f_m_ar_data = {m_axi_arid, m_axi_araddr, m_axi_arlen, m_axi_arsize,
        m_axi_arburst, m_axi_arlock, m_axi_arcache, m_axi_arprot};

    always @(posedge s_clk) begin
        if (!s_rst && f_s_ar && f_s_ar_n == f_pick_ar) f_ar_seen <= f_s_ar_data;
    end

    always @(posedge m_clk) begin
        if (!m_rst && f_m_r && f_m_r_n == f_pick_r) begin
            f_r_seen <= {m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast};
        end
    end

    always @(*) begin
        if (f_clean) begin
            // Nothing comes out that was not taken in, and each item in its turn.
            promise_ar_taken_first: assert (!m_axi_arvalid || f_m_ar_n < f_s_ar_n);
            promise_r_taken_first: assert (!s_axi_rvalid || f_s_r_n < f_m_r_n);
            promise_ar_kept: assert (!m_axi_arvalid || f_m_ar_n != f_pick_ar
                || f_m_ar_data == f_ar_seen);
            promise_r_kept: assert (!s_axi_rvalid || f_s_r_n != f_pick_r
                || {s_axi_rid, s_axi_rdata, s_axi_rresp, s_axi_rlast} == f_r_seen);
        end
    end

    always @(posedge m_clk) begin
        if (f_clean) begin
            cover_request_crosses: cover (f_m_ar && f_m_ar_n == 4'd1);
            cover_ar_stall: cover (m_axi_arvalid && !m_axi_arready && f_m_ar_n == 4'd1);
        end
        // A reset of the slave side with beats owed: the bridge drains them to the end.
        if (!m_rst && !f_m_reset_again && f_s_reset_again) begin
            cover_reset_mid_burst: cover (f_m_r && f_m_owed == 6'd1 && f_m_ar_n != 4'd0);
        end
    end

    always @(posedge s_clk) begin
        if (f_clean) begin
            cover_burst_returns: cover (f_s_r && s_axi_rlast && s_axi_rid == 1'b1
                && f_s_r_n >= 6'd1);
            cover_r_stall: cover (s_axi_rvalid && !s_axi_rready && f_s_r_n != 6'd0);
        end
    end

`endif

endmodule

`resetall
