// Vendor AXI4 RAM slave, written for card-sim's own-RTL example in the style of generated
// third-party IP: upper-case port names, a file named unlike its module, and a define
// (VENDOR_RAM_ADDR_BITS) that the build must supply.
//
// One write burst and one read burst at a time; FIXED, INCR and WRAP bursts, narrow beats,
// write strobes. BROKEN = 1 reads the first beat's address from S_AXI_ARADDR one cycle after
// the handshake, when ARVALID is already low: a bug that only a master that changes ARADDR
// after the handshake exposes.

`timescale 1ns / 1ps
`default_nettype none

module vendor_axi4_ram #
(
    parameter integer C_S_AXI_ID_WIDTH   = 4,
    parameter integer C_S_AXI_DATA_WIDTH = 32,
    parameter integer C_S_AXI_ADDR_WIDTH = 16,
    parameter integer BROKEN             = 0
)
(
    input  wire                            S_AXI_ACLK,
    input  wire                            S_AXI_ARESETN,
    input  wire [C_S_AXI_ID_WIDTH-1:0]     S_AXI_AWID,
    input  wire [C_S_AXI_ADDR_WIDTH-1:0]   S_AXI_AWADDR,
    input  wire [7:0]                      S_AXI_AWLEN,
    input  wire [2:0]                      S_AXI_AWSIZE,
    input  wire [1:0]                      S_AXI_AWBURST,
    input  wire                            S_AXI_AWLOCK,
    input  wire [3:0]                      S_AXI_AWCACHE,
    input  wire [2:0]                      S_AXI_AWPROT,
    input  wire                            S_AXI_AWVALID,
    output reg                             S_AXI_AWREADY,
    input  wire [C_S_AXI_DATA_WIDTH-1:0]   S_AXI_WDATA,
    input  wire [C_S_AXI_DATA_WIDTH/8-1:0] S_AXI_WSTRB,
    input  wire                            S_AXI_WLAST,
    input  wire                            S_AXI_WVALID,
    output reg                             S_AXI_WREADY,
    output reg  [C_S_AXI_ID_WIDTH-1:0]     S_AXI_BID,
    output wire [1:0]                      S_AXI_BRESP,
    output reg                             S_AXI_BVALID,
    input  wire                            S_AXI_BREADY,
    input  wire [C_S_AXI_ID_WIDTH-1:0]     S_AXI_ARID,
    input  wire [C_S_AXI_ADDR_WIDTH-1:0]   S_AXI_ARADDR,
    input  wire [7:0]                      S_AXI_ARLEN,
    input  wire [2:0]                      S_AXI_ARSIZE,
    input  wire [1:0]                      S_AXI_ARBURST,
    input  wire                            S_AXI_ARLOCK,
    input  wire [3:0]                      S_AXI_ARCACHE,
    input  wire [2:0]                      S_AXI_ARPROT,
    input  wire                            S_AXI_ARVALID,
    output reg                             S_AXI_ARREADY,
    output reg  [C_S_AXI_ID_WIDTH-1:0]     S_AXI_RID,
    output reg  [C_S_AXI_DATA_WIDTH-1:0]   S_AXI_RDATA,
    output wire [1:0]                      S_AXI_RRESP,
    output reg                             S_AXI_RLAST,
    output reg                             S_AXI_RVALID,
    input  wire                            S_AXI_RREADY
);

localparam integer ADDR_LSB = $clog2(C_S_AXI_DATA_WIDTH / 8);
localparam integer MEM_BITS = `VENDOR_RAM_ADDR_BITS;
localparam integer WORDS    = 1 << MEM_BITS;
localparam [1:0] BURST_FIXED = 2'd0, BURST_WRAP = 2'd2;

reg [C_S_AXI_DATA_WIDTH-1:0] mem [0:WORDS-1];

integer i;
initial begin
    for (i = 0; i < WORDS; i = i + 1) mem[i] = {C_S_AXI_DATA_WIDTH{1'b0}};
end

assign S_AXI_BRESP = 2'b00;
assign S_AXI_RRESP = 2'b00;

function [C_S_AXI_ADDR_WIDTH-1:0] next_addr(input [C_S_AXI_ADDR_WIDTH-1:0] a,
                                            input [2:0] size, input [1:0] burst,
                                            input [7:0] len);
    reg [C_S_AXI_ADDR_WIDTH-1:0] bytes, aligned, incr, mask;
    begin
        bytes = {{(C_S_AXI_ADDR_WIDTH-1){1'b0}}, 1'b1} << size;
        aligned = a & ~(bytes - 1'b1);
        incr = aligned + bytes;
        mask = (bytes * ({{(C_S_AXI_ADDR_WIDTH-8){1'b0}}, len} + 1'b1)) - 1'b1;
        if (burst == BURST_FIXED) next_addr = a;
        else if (burst == BURST_WRAP) next_addr = (a & ~mask) | (incr & mask);
        else next_addr = incr;
    end
endfunction

function [MEM_BITS-1:0] word(input [C_S_AXI_ADDR_WIDTH-1:0] a);
    word = a[ADDR_LSB +: MEM_BITS];
endfunction

// Write side.
reg [C_S_AXI_ADDR_WIDTH-1:0] w_addr;
reg [7:0] w_len;
reg [2:0] w_size;
reg [1:0] w_burst;

always @(posedge S_AXI_ACLK) begin
    if (!S_AXI_ARESETN) begin
        S_AXI_AWREADY <= 1'b0;
        S_AXI_WREADY <= 1'b0;
        S_AXI_BVALID <= 1'b0;
        S_AXI_BID <= {C_S_AXI_ID_WIDTH{1'b0}};
    end else begin
        if (!S_AXI_AWREADY && !S_AXI_WREADY && !S_AXI_BVALID) S_AXI_AWREADY <= 1'b1;
        if (S_AXI_AWREADY && S_AXI_AWVALID) begin
            S_AXI_AWREADY <= 1'b0;
            S_AXI_WREADY <= 1'b1;
            S_AXI_BID <= S_AXI_AWID;
            w_addr <= S_AXI_AWADDR;
            w_len <= S_AXI_AWLEN;
            w_size <= S_AXI_AWSIZE;
            w_burst <= S_AXI_AWBURST;
        end
        if (S_AXI_WREADY && S_AXI_WVALID) begin
            for (i = 0; i < C_S_AXI_DATA_WIDTH / 8; i = i + 1) begin
                if (S_AXI_WSTRB[i]) mem[word(w_addr)][i*8 +: 8] <= S_AXI_WDATA[i*8 +: 8];
            end
            w_addr <= next_addr(w_addr, w_size, w_burst, w_len);
            if (S_AXI_WLAST) begin
                S_AXI_WREADY <= 1'b0;
                S_AXI_BVALID <= 1'b1;
            end
        end
        if (S_AXI_BVALID && S_AXI_BREADY) S_AXI_BVALID <= 1'b0;
    end
end

// Read side.
reg [C_S_AXI_ADDR_WIDTH-1:0] r_addr;
reg [7:0] r_len, r_count;
reg [2:0] r_size;
reg [1:0] r_burst;
reg r_first;

wire [C_S_AXI_ADDR_WIDTH-1:0] r_first_addr = (BROKEN != 0) ? S_AXI_ARADDR : r_addr;
wire [C_S_AXI_ADDR_WIDTH-1:0] r_next = next_addr(r_addr, r_size, r_burst, r_len);

always @(posedge S_AXI_ACLK) begin
    if (!S_AXI_ARESETN) begin
        S_AXI_ARREADY <= 1'b0;
        S_AXI_RVALID <= 1'b0;
        S_AXI_RLAST <= 1'b0;
        r_first <= 1'b0;
    end else begin
        if (!S_AXI_ARREADY && !S_AXI_RVALID && !r_first) S_AXI_ARREADY <= 1'b1;
        if (S_AXI_ARREADY && S_AXI_ARVALID) begin
            S_AXI_ARREADY <= 1'b0;
            S_AXI_RID <= S_AXI_ARID;
            r_addr <= S_AXI_ARADDR;
            r_len <= S_AXI_ARLEN;
            r_size <= S_AXI_ARSIZE;
            r_burst <= S_AXI_ARBURST;
            r_count <= 8'd0;
            r_first <= 1'b1;
        end
        if (r_first) begin
            r_first <= 1'b0;
            r_addr <= r_first_addr;
            S_AXI_RDATA <= mem[word(r_first_addr)];
            S_AXI_RLAST <= (r_len == 8'd0);
            S_AXI_RVALID <= 1'b1;
        end
        if (S_AXI_RVALID && S_AXI_RREADY) begin
            if (S_AXI_RLAST) begin
                S_AXI_RVALID <= 1'b0;
                S_AXI_RLAST <= 1'b0;
            end else begin
                r_addr <= r_next;
                r_count <= r_count + 8'd1;
                S_AXI_RDATA <= mem[word(r_next)];
                S_AXI_RLAST <= (r_count + 8'd1 == r_len);
            end
        end
    end
end

endmodule

`default_nettype wire
