// Vendor AXI4 test master, written for card-sim's own-RTL example in the style of Vivado's AXI4
// master template: a rising INIT_AXI_TXN starts C_NO_BURSTS INCR write bursts of
// C_M_AXI_BURST_LEN full-width beats from C_M_TARGET_SLAVE_BASE_ADDR, burst k with ID k, then
// reads every burst back with its reads all in flight at once, and compares. TXN_DONE rises when
// the last read burst has ended and stays high until the next start; ERROR is the OR of three
// flags, which stay until the next start: WRITE_RESP_ERROR (a B answered SLVERR or DECERR),
// READ_RESP_ERROR (an R beat did) and READ_MISMATCH (an OKAY beat's data is not what was
// written, or RLAST is not on the burst's last beat).
//
// Beat j of burst k carries pattern(k, j) (below), repeated over the data bus. A correct master
// takes read beats by RID, so it accepts the answers of different IDs in any order and
// interleaved beat by beat, as AXI allows.
//
// BUG selects a seeded bug of the kinds published against AXI master templates and common in
// user DMA engines; each passes a slave that answers OKAY, in order, one burst at a time, with
// AWREADY high whenever it has room:
//   1  assumes in-order responses across IDs: a read beat is checked against the oldest read
//      burst not yet ended, whatever its RID.
//   2  ignores SLVERR: only DECERR counts as an error response.
//   3  mishandles interleaved read data: the burst a beat belongs to is taken from RID at a
//      burst's first beat and kept until RLAST, so a beat of another ID in between is checked
//      against the wrong burst.
//   4  issues a write's data before its address is accepted and then changes it: WDATA is
//      loaded at the AW handshake, while WVALID rises a cycle after AWVALID whatever AWREADY
//      does, so a slave that holds AWREADY low sees WDATA change under a stalled WVALID (or,
//      if it takes the beat first, the wrong data).

`timescale 1ns / 1ps
`default_nettype none

module vendor_axi4_master #
(
    // Bursts of the test, each with its own ID (at most 2^C_M_AXI_ID_WIDTH).
    parameter integer C_NO_BURSTS        = 4,
    // Beats per burst (1 to 255: the beat counters are 8 bits).
    parameter integer C_M_AXI_BURST_LEN  = 16,
    // 1 to 6.
    parameter integer C_M_AXI_ID_WIDTH   = 2,
    parameter integer C_M_AXI_ADDR_WIDTH = 32,
    // A multiple of 32.
    parameter integer C_M_AXI_DATA_WIDTH = 32,
    parameter [C_M_AXI_ADDR_WIDTH-1:0] C_M_TARGET_SLAVE_BASE_ADDR = {C_M_AXI_ADDR_WIDTH{1'b0}},
    // The seeded bug (0: none; see above).
    parameter integer BUG                = 0
)
(
    input  wire                            INIT_AXI_TXN,
    output reg                             TXN_DONE,
    output wire                            ERROR,
    output reg                             WRITE_RESP_ERROR,
    output reg                             READ_RESP_ERROR,
    output reg                             READ_MISMATCH,
    input  wire                            M_AXI_ACLK,
    input  wire                            M_AXI_ARESETN,
    output reg  [C_M_AXI_ID_WIDTH-1:0]     M_AXI_AWID,
    output reg  [C_M_AXI_ADDR_WIDTH-1:0]   M_AXI_AWADDR,
    output wire [7:0]                      M_AXI_AWLEN,
    output wire [2:0]                      M_AXI_AWSIZE,
    output wire [1:0]                      M_AXI_AWBURST,
    output wire                            M_AXI_AWLOCK,
    output wire [3:0]                      M_AXI_AWCACHE,
    output wire [2:0]                      M_AXI_AWPROT,
    output wire [3:0]                      M_AXI_AWQOS,
    output reg                             M_AXI_AWVALID,
    input  wire                            M_AXI_AWREADY,
    output reg  [C_M_AXI_DATA_WIDTH-1:0]   M_AXI_WDATA,
    output wire [C_M_AXI_DATA_WIDTH/8-1:0] M_AXI_WSTRB,
    output wire                            M_AXI_WLAST,
    output reg                             M_AXI_WVALID,
    input  wire                            M_AXI_WREADY,
    input  wire [C_M_AXI_ID_WIDTH-1:0]     M_AXI_BID,
    input  wire [1:0]                      M_AXI_BRESP,
    input  wire                            M_AXI_BVALID,
    output wire                            M_AXI_BREADY,
    output reg  [C_M_AXI_ID_WIDTH-1:0]     M_AXI_ARID,
    output reg  [C_M_AXI_ADDR_WIDTH-1:0]   M_AXI_ARADDR,
    output wire [7:0]                      M_AXI_ARLEN,
    output wire [2:0]                      M_AXI_ARSIZE,
    output wire [1:0]                      M_AXI_ARBURST,
    output wire                            M_AXI_ARLOCK,
    output wire [3:0]                      M_AXI_ARCACHE,
    output wire [2:0]                      M_AXI_ARPROT,
    output wire [3:0]                      M_AXI_ARQOS,
    output reg                             M_AXI_ARVALID,
    input  wire                            M_AXI_ARREADY,
    input  wire [C_M_AXI_ID_WIDTH-1:0]     M_AXI_RID,
    input  wire [C_M_AXI_DATA_WIDTH-1:0]   M_AXI_RDATA,
    input  wire [1:0]                      M_AXI_RRESP,
    input  wire                            M_AXI_RLAST,
    input  wire                            M_AXI_RVALID,
    output wire                            M_AXI_RREADY
);

initial begin
    if (BUG < 0 || BUG > 4) begin
        $error("vendor_axi4_master: BUG must be 0 to 4");
        $finish;
    end
    if (C_M_AXI_ID_WIDTH < 1 || C_M_AXI_ID_WIDTH > 6 || C_NO_BURSTS < 1
            || C_NO_BURSTS > (1 << C_M_AXI_ID_WIDTH)) begin
        $error("vendor_axi4_master: C_M_AXI_ID_WIDTH must be 1 to 6 and C_NO_BURSTS fit the IDs");
        $finish;
    end
    if (C_M_AXI_BURST_LEN < 1 || C_M_AXI_BURST_LEN > 255 || C_M_AXI_DATA_WIDTH % 32 != 0) begin
        $error("vendor_axi4_master: bad C_M_AXI_BURST_LEN or C_M_AXI_DATA_WIDTH");
        $finish;
    end
end

localparam integer BYTES = C_M_AXI_DATA_WIDTH / 8;
localparam integer IDS = 1 << C_M_AXI_ID_WIDTH;
localparam integer LAST_BURST_I = C_NO_BURSTS - 1;
localparam integer AXLEN_I = C_M_AXI_BURST_LEN - 1;
localparam integer SIZE_I = $clog2(BYTES);
localparam [7:0] LAST_BURST = LAST_BURST_I[7:0];
localparam [7:0] AXLEN = AXLEN_I[7:0];
localparam [2:0] SIZE = SIZE_I[2:0];
localparam [C_M_AXI_ADDR_WIDTH-1:0] BURST_BYTES = C_M_AXI_BURST_LEN * BYTES;
// One bit per ID; the test's bursts are IDs 0 to C_NO_BURSTS - 1.
localparam [63:0] ALL_64 = (64'd1 << C_NO_BURSTS) - 64'd1;
localparam [IDS-1:0] ALL = ALL_64[IDS-1:0];

// Every burst is INCR of full-width beats, normal non-exclusive, as the template's.
assign M_AXI_AWLEN   = AXLEN;
assign M_AXI_AWSIZE  = SIZE;
assign M_AXI_AWBURST = 2'b01;
assign M_AXI_AWLOCK  = 1'b0;
assign M_AXI_AWCACHE = 4'b0010;
assign M_AXI_AWPROT  = 3'b000;
assign M_AXI_AWQOS   = 4'b0000;
assign M_AXI_WSTRB   = {BYTES{1'b1}};
assign M_AXI_ARLEN   = AXLEN;
assign M_AXI_ARSIZE  = SIZE;
assign M_AXI_ARBURST = 2'b01;
assign M_AXI_ARLOCK  = 1'b0;
assign M_AXI_ARCACHE = 4'b0010;
assign M_AXI_ARPROT  = 3'b000;
assign M_AXI_ARQOS   = 4'b0000;

assign ERROR = WRITE_RESP_ERROR | READ_RESP_ERROR | READ_MISMATCH;

// Beat `beat` of burst `k`: distinct for every beat of the test.
function [C_M_AXI_DATA_WIDTH-1:0] pattern(input [7:0] k, input [7:0] beat);
    pattern = {(C_M_AXI_DATA_WIDTH / 32){k, beat, 8'ha5 ^ beat, 8'h3c ^ k}};
endfunction

function [C_M_AXI_ADDR_WIDTH-1:0] burst_addr(input [7:0] k);
    burst_addr = C_M_TARGET_SLAVE_BASE_ADDR
                 + {{(C_M_AXI_ADDR_WIDTH-8){1'b0}}, k} * BURST_BYTES;
endfunction

// An error response. BUG 2 counts DECERR only.
function resp_error(input [1:0] resp);
    resp_error = (BUG == 2) ? (resp == 2'b11) : (resp != 2'b00);
endfunction

localparam [1:0] S_IDLE = 2'd0, S_WRITE = 2'd1, S_READ = 2'd2, S_DONE = 2'd3;
reg [1:0] state;
reg init_ff;
wire start = INIT_AXI_TXN && !init_ff;

// ---------------------------------------------------------------------------------------------
// Writes: one burst at a time, its data a cycle after its address, responses counted by ID.
reg [7:0] w_burst;        // the burst whose address and data are on the way
reg [7:0] w_beat;         // its next data beat
reg       w_busy;         // its address or data is not yet all accepted
reg       w_go;           // raise WVALID at the next edge
reg       aw_done;        // its address is accepted
reg       w_done;         // its last data beat is accepted
reg [IDS-1:0] b_seen;     // the IDs answered on B
wire aw_hs = M_AXI_AWVALID && M_AXI_AWREADY;
wire w_hs  = M_AXI_WVALID && M_AXI_WREADY;
wire b_hs  = M_AXI_BVALID && M_AXI_BREADY;
assign M_AXI_WLAST  = (w_beat == AXLEN);
assign M_AXI_BREADY = (state == S_WRITE);

// ---------------------------------------------------------------------------------------------
// Reads: every burst's address back to back, beats taken as they come.
reg [7:0] ar_burst;                // the next read address to issue
reg [7:0] r_beat [0:IDS-1];        // beats taken per ID
reg [IDS-1:0] r_ended;             // the IDs whose burst has ended
reg [7:0] r_oldest;                // BUG 1: bursts ended so far, taken to end in order
reg [7:0] r_count;                 // BUG 1 and 3: beats of the burst taken to be current
reg [7:0] r_latched;               // BUG 3: the burst latched at a first beat
reg       r_in_burst;              // BUG 3: between a first beat and its RLAST
wire r_hs = M_AXI_RVALID && M_AXI_RREADY;
assign M_AXI_RREADY = (state == S_READ);

wire [7:0] rid = {{(8-C_M_AXI_ID_WIDTH){1'b0}}, M_AXI_RID};
// The burst and beat a read beat is taken to be.
wire [7:0] r_burst_of = (BUG == 1) ? r_oldest
                      : (BUG == 3) ? (r_in_burst ? r_latched : rid)
                      : rid;
wire [7:0] r_beat_of  = (BUG == 1 || BUG == 3) ? r_count : r_beat[M_AXI_RID];

integer i;

always @(posedge M_AXI_ACLK) begin
    if (!M_AXI_ARESETN) begin
        state <= S_IDLE;
        init_ff <= 1'b0;
        TXN_DONE <= 1'b0;
        WRITE_RESP_ERROR <= 1'b0;
        READ_RESP_ERROR <= 1'b0;
        READ_MISMATCH <= 1'b0;
        M_AXI_AWVALID <= 1'b0;
        M_AXI_AWID <= {C_M_AXI_ID_WIDTH{1'b0}};
        M_AXI_AWADDR <= {C_M_AXI_ADDR_WIDTH{1'b0}};
        M_AXI_WVALID <= 1'b0;
        M_AXI_WDATA <= {C_M_AXI_DATA_WIDTH{1'b0}};
        M_AXI_ARVALID <= 1'b0;
        M_AXI_ARID <= {C_M_AXI_ID_WIDTH{1'b0}};
        M_AXI_ARADDR <= {C_M_AXI_ADDR_WIDTH{1'b0}};
        w_burst <= 8'd0;
        w_beat <= 8'd0;
        w_busy <= 1'b0;
        w_go <= 1'b0;
        aw_done <= 1'b0;
        w_done <= 1'b0;
        b_seen <= {IDS{1'b0}};
        ar_burst <= 8'd0;
        r_ended <= {IDS{1'b0}};
        r_oldest <= 8'd0;
        r_count <= 8'd0;
        r_latched <= 8'd0;
        r_in_burst <= 1'b0;
        for (i = 0; i < IDS; i = i + 1) r_beat[i] <= 8'd0;
    end else begin
        init_ff <= INIT_AXI_TXN;
        case (state)
            S_IDLE, S_DONE: if (start) begin
                state <= S_WRITE;
                TXN_DONE <= 1'b0;
                WRITE_RESP_ERROR <= 1'b0;
                READ_RESP_ERROR <= 1'b0;
                READ_MISMATCH <= 1'b0;
                w_burst <= 8'd0;
                b_seen <= {IDS{1'b0}};
                ar_burst <= 8'd0;
                r_ended <= {IDS{1'b0}};
                r_oldest <= 8'd0;
                r_count <= 8'd0;
                r_in_burst <= 1'b0;
                for (i = 0; i < IDS; i = i + 1) r_beat[i] <= 8'd0;
            end

            S_WRITE: begin
                // The next burst once the last one's address and data are all accepted.
                if (!w_busy && w_burst <= LAST_BURST) begin
                    w_busy <= 1'b1;
                    w_go <= 1'b1;
                    w_beat <= 8'd0;
                    aw_done <= 1'b0;
                    w_done <= 1'b0;
                    M_AXI_AWVALID <= 1'b1;
                    M_AXI_AWID <= w_burst[C_M_AXI_ID_WIDTH-1:0];
                    M_AXI_AWADDR <= burst_addr(w_burst);
                    if (BUG != 4) M_AXI_WDATA <= pattern(w_burst, 8'd0);
                end
                // WVALID a cycle after AWVALID, whatever AWREADY does: a master must not wait
                // for AWREADY before it offers the data.
                if (w_go) begin
                    w_go <= 1'b0;
                    M_AXI_WVALID <= 1'b1;
                end
                if (aw_hs) begin
                    M_AXI_AWVALID <= 1'b0;
                    aw_done <= 1'b1;
                    if (BUG == 4) M_AXI_WDATA <= pattern(w_burst, 8'd0);
                end
                if (w_hs) begin
                    w_beat <= w_beat + 8'd1;
                    M_AXI_WDATA <= pattern(w_burst, w_beat + 8'd1);
                    if (M_AXI_WLAST) begin
                        M_AXI_WVALID <= 1'b0;
                        w_done <= 1'b1;
                    end
                end
                if (w_busy && (aw_done || aw_hs) && (w_done || (w_hs && M_AXI_WLAST))) begin
                    w_busy <= 1'b0;
                    w_burst <= w_burst + 8'd1;
                end
                if (b_hs) begin
                    // An error response, or a second answer to one burst (the slave's error).
                    if (resp_error(M_AXI_BRESP) || b_seen[M_AXI_BID]) WRITE_RESP_ERROR <= 1'b1;
                    b_seen[M_AXI_BID] <= 1'b1;
                end
                if (w_burst > LAST_BURST && (b_seen & ALL) == ALL) state <= S_READ;
            end

            S_READ: begin
                if (!M_AXI_ARVALID && ar_burst <= LAST_BURST) begin
                    M_AXI_ARVALID <= 1'b1;
                    M_AXI_ARID <= ar_burst[C_M_AXI_ID_WIDTH-1:0];
                    M_AXI_ARADDR <= burst_addr(ar_burst);
                    ar_burst <= ar_burst + 8'd1;
                end
                if (M_AXI_ARVALID && M_AXI_ARREADY) begin
                    if (ar_burst <= LAST_BURST) begin
                        M_AXI_ARID <= ar_burst[C_M_AXI_ID_WIDTH-1:0];
                        M_AXI_ARADDR <= burst_addr(ar_burst);
                        ar_burst <= ar_burst + 8'd1;
                    end else begin
                        M_AXI_ARVALID <= 1'b0;
                    end
                end
                if (r_hs) begin
                    if (resp_error(M_AXI_RRESP)) begin
                        READ_RESP_ERROR <= 1'b1;
                    end else if (M_AXI_RDATA != pattern(r_burst_of, r_beat_of)
                                 || M_AXI_RLAST != (r_beat_of == AXLEN)) begin
                        READ_MISMATCH <= 1'b1;
                    end
                    r_beat[M_AXI_RID] <= r_beat[M_AXI_RID] + 8'd1;
                    r_count <= M_AXI_RLAST ? 8'd0 : r_count + 8'd1;
                    r_in_burst <= !M_AXI_RLAST;
                    if (!r_in_burst) r_latched <= rid;
                    if (M_AXI_RLAST) begin
                        r_oldest <= r_oldest + 8'd1;
                        r_ended[M_AXI_RID] <= 1'b1;
                    end
                end
                if ((r_ended & ALL) == ALL) begin
                    state <= S_DONE;
                    TXN_DONE <= 1'b1;
                end
            end

            default: state <= S_IDLE;
        endcase
    end
end

endmodule

`default_nettype wire
