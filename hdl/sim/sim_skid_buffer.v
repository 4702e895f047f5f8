/*
 * Simulation-only register slice (skid buffer) for one valid/ready channel.
 *
 * Every output is registered, so there is no combinational path from the input side to the
 * output side or back: s_ready comes from a register and the payload is held in one of two
 * registers (output or skid) while the output is stalled. Used by the bus pass-through tops
 * that the bus models talk through.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module sim_skid_buffer #
(
    // Width of the payload carried alongside valid/ready, in bits
    parameter WIDTH = 8
)
(
    input  wire             clk,
    input  wire             rst,

    /*
     * Input side
     */
    input  wire [WIDTH-1:0] s_data,
    input  wire             s_valid,
    output wire             s_ready,

    /*
     * Output side
     */
    output wire [WIDTH-1:0] m_data,
    output wire             m_valid,
    input  wire             m_ready
);

// check configuration
initial begin
    if (WIDTH < 1) begin
        $error("Error: WIDTH must be at least 1 (instance %m)");
        $finish;
    end
end

reg s_ready_reg = 1'b0;
reg m_valid_reg = 1'b0, m_valid_next;
reg [WIDTH-1:0] m_data_reg = {WIDTH{1'b0}};
reg temp_valid_reg = 1'b0, temp_valid_next;
reg [WIDTH-1:0] temp_data_reg = {WIDTH{1'b0}};

reg store_input_to_output;
reg store_input_to_temp;
reg store_temp_to_output;

// Ready next cycle if the output drains now, or if the skid register is empty and will stay
// empty (the output is empty or nothing arrives).
wire s_ready_early = m_ready || (!temp_valid_reg && (!m_valid_reg || !s_valid));

assign s_ready = s_ready_reg;
assign m_data = m_data_reg;
assign m_valid = m_valid_reg;

always @* begin
    m_valid_next = m_valid_reg;
    temp_valid_next = temp_valid_reg;
    store_input_to_output = 1'b0;
    store_input_to_temp = 1'b0;
    store_temp_to_output = 1'b0;

    if (s_ready_reg) begin
        if (m_ready || !m_valid_reg) begin
            // The output is free: the input goes straight to it.
            m_valid_next = s_valid;
            store_input_to_output = 1'b1;
        end else begin
            // The output is stalled: the input goes to the skid register.
            temp_valid_next = s_valid;
            store_input_to_temp = 1'b1;
        end
    end else if (m_ready) begin
        // The input side is closed; the skid register drains to the output.
        m_valid_next = temp_valid_reg;
        temp_valid_next = 1'b0;
        store_temp_to_output = 1'b1;
    end
end

always @(posedge clk) begin
    s_ready_reg <= s_ready_early;
    m_valid_reg <= m_valid_next;
    temp_valid_reg <= temp_valid_next;

    if (store_input_to_output) begin
        m_data_reg <= s_data;
    end else if (store_temp_to_output) begin
        m_data_reg <= temp_data_reg;
    end

    if (store_input_to_temp) begin
        temp_data_reg <= s_data;
    end

    if (rst) begin
        s_ready_reg <= 1'b0;
        m_valid_reg <= 1'b0;
        temp_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
